import type {
  ContentBlock,
  FileBlock,
  ImageBlock,
  JsonValue,
  Message,
  TextBlock,
} from "../../../model/message.ts";
import { cameAsList } from "../content-list.ts";
import { planExport, where, type ExportEntry } from "../export-plan.ts";
import { functionArguments, isCustomToolCall } from "../function-arguments.ts";
import {
  mediaPlaceholder,
  mediaSource,
  toDataUrl,
  unresolvedReferenceError,
  unsupportedMediaError,
} from "../media.ts";
import type { ExportOptions } from "../options.ts";
import { isPartOptionsCarrier } from "../part-options-carrier.ts";
import { textLayout } from "../text-parts.ts";
import { encodeToolResultText } from "../tool-result-text.ts";
import type {
  OpenAIChatAssistantMessage,
  OpenAIChatMessage,
  OpenAIChatTextPart,
  OpenAIChatUserPart,
} from "./openai-chat-message.ts";
import { assistantText, storedAnnotations } from "./assistant-text.ts";
import { reasoningFields } from "./reasoning-details.ts";
import { toolAttachmentsNote } from "./tool-attachments-note.ts";

/** Options of `toOpenAIChat`. */
export interface OpenAIChatExportOptions extends ExportOptions {
  /**
   * Role for system messages. Default: `developer` for messages imported from a developer message, else
   * `system`. Set it to force one role for all (o1-style models want `developer`).
   */
  readonly systemRole?: "system" | "developer";
  /**
   * Send reasoning as `reasoning_content` (default `include`); only on assistant messages that make tool calls
   * (`tool-calls`: what DeepSeek's thinking mode requires back, the rest of the reasoning saves its tokens); or
   * leave it out for servers that reject it (`omit`).
   */
  readonly reasoning?: "include" | "tool-calls" | "omit";
  /** Add the tool's `name` to tool messages (legacy field some OpenAI-compatible servers require). Default false. */
  readonly toolMessageNames?: boolean;
}

const FORMAT = "OpenAI chat";
const AUDIO_FORMATS: Readonly<Record<string, "wav" | "mp3">> = {
  "audio/wav": "wav",
  "audio/x-wav": "wav",
  "audio/mpeg": "mp3",
  "audio/mp3": "mp3",
};

function mediaPart(block: ImageBlock | FileBlock, at: string, options: ExportOptions): OpenAIChatUserPart {
  const source = mediaSource(block);
  if (source.kind === "ref") {
    if (options.references !== "placeholder") throw unresolvedReferenceError(at, source.ref);
    return { type: "text", text: mediaPlaceholder(block, `stored as ${source.ref}`) };
  }
  if (block.type === "image") {
    // "original" is left out: openai 6.x's chat types do not know it (see `OpenAIChatImageDetail`).
    const detail = block.detail === undefined || block.detail === "original" ? {} : { detail: block.detail };
    if (source.kind === "data")
      return { type: "image_url", image_url: { url: toDataUrl(block.mediaType, source.data), ...detail } };
    if (source.kind === "url") return { type: "image_url", image_url: { url: source.url, ...detail } };
    throw unsupportedMediaError(at, FORMAT, "an image given by provider file id");
  }
  const filename = block.filename === undefined ? {} : { filename: block.filename };
  if (source.kind === "data") {
    const audio = AUDIO_FORMATS[block.mediaType];
    if (audio !== undefined)
      return { type: "input_audio", input_audio: { data: source.data, format: audio } };
    return { type: "file", file: { file_data: toDataUrl(block.mediaType, source.data), ...filename } };
  }
  const fileId = source.kind === "provider-file" ? source.references["openai"] : undefined;
  if (fileId === undefined)
    throw unsupportedMediaError(at, FORMAT, "a file given by URL or a non-OpenAI file id");
  return { type: "file", file: { file_id: fileId, ...filename } };
}

function userContent(
  blocks: readonly ContentBlock[],
  message: Message,
  index: number,
  options: ExportOptions,
): string | OpenAIChatUserPart[] {
  const only = blocks[0];
  if (blocks.length === 1 && only?.type === "text" && !cameAsList(message)) return only.text;
  return blocks.map((block, position): OpenAIChatUserPart => {
    if (block.type === "text") return { type: "text", text: block.text };
    return mediaPart(block as ImageBlock | FileBlock, `${where(index)}.content[${position}]`, options);
  });
}

function textContent(texts: readonly string[], asList = false): string | OpenAIChatTextPart[] {
  return texts.length === 1 && !asList ? texts[0]! : texts.map((text) => ({ type: "text", text }));
}

function sendsReasoning(options: OpenAIChatExportOptions, callsTools: boolean): boolean {
  const mode = options.reasoning ?? "include";
  return mode === "include" || (mode === "tool-calls" && callsTools);
}

function assistantMessage(
  message: Message,
  index: number,
  options: OpenAIChatExportOptions,
): OpenAIChatAssistantMessage {
  const texts: TextBlock[] = [];
  const toolCalls: NonNullable<OpenAIChatAssistantMessage["tool_calls"]> = [];
  const reasoning = [];
  for (const [position, block] of message.content.entries()) {
    if (block.type === "text") texts.push(block);
    else if (block.type === "tool-call")
      toolCalls.push(
        isCustomToolCall(block)
          ? { id: block.id, type: "custom", custom: { name: block.name, input: block.input } }
          : {
              id: block.id,
              type: "function",
              function: { name: block.name, arguments: functionArguments(block, message) },
            },
      );
    else if (block.type === "reasoning") {
      if (!isPartOptionsCarrier(block)) reasoning.push(block);
    } else
      throw unsupportedMediaError(
        `${where(index)}.content[${position}]`,
        FORMAT,
        "images or files from the assistant",
      );
  }
  return {
    role: "assistant",
    ...assistantText(texts, message, toolCalls.length > 0),
    ...(sendsReasoning(options, toolCalls.length > 0) && reasoningFields(reasoning)),
    ...(toolCalls.length > 0 && { tool_calls: toolCalls }),
    ...storedAnnotations(message),
  };
}

function systemRole(message: Message, options: OpenAIChatExportOptions): "system" | "developer" {
  return options.systemRole ?? (message.metadata?.["openai.role"] === "developer" ? "developer" : "system");
}

function convert(entry: ExportEntry, options: OpenAIChatExportOptions): OpenAIChatMessage[] {
  switch (entry.kind) {
    case "system": {
      const texts = entry.message.content.flatMap((block) => (block.type === "text" ? [block.text] : []));
      return [
        {
          role: systemRole(entry.message, options),
          content: texts.length === 0 ? "" : textContent(texts, cameAsList(entry.message)),
        },
      ];
    }
    case "user":
      return [{ role: "user", content: userContent(entry.blocks, entry.message, entry.index, options) }];
    case "assistant":
      return [assistantMessage(entry.message, entry.index, options)];
    case "tools": {
      const tools: OpenAIChatMessage[] = [];
      const attachments: OpenAIChatMessage[] = [];
      for (const { block, message, index } of entry.results) {
        // Attachments travel in a separate user message, so the tool message's own layout ignores them.
        const layout = textLayout(encodeToolResultText(block.content, block.isError, true), message, false);
        const content =
          typeof layout === "string" ? layout : layout.map((text) => ({ type: "text" as const, text }));
        const name =
          options.toolMessageNames === true && block.toolName !== "" ? { name: block.toolName } : {};
        tools.push({ role: "tool", tool_call_id: block.callId, content, ...name });
        if (block.attachments === undefined || block.attachments.length === 0) continue;
        const media = block.attachments.map((attachment, position) =>
          mediaPart(attachment, `${where(index)}.content[0].attachments[${position}]`, options),
        );
        attachments.push({
          role: "user",
          content: [{ type: "text", text: toolAttachmentsNote(block.callId) }, ...media],
        });
      }
      return [...tools, ...attachments];
    }
  }
}

/**
 * Converts ctxkit messages to OpenAI Chat Completions `messages`. System messages stay in place (role `system`
 * or `developer`); summaries are user text in the summary envelope; markers are left out. Reasoning goes in
 * `reasoning_content` (plus `reasoning_details` when it has signatures or redacted parts). A lone refusal goes
 * in the `refusal` field, one beside text as a `refusal` part. A failed tool result is prefixed `[tool error] `;
 * JSON results are serialised; a tool's images or files follow the tool messages in a user message opened by
 * `[attachments of tool call <id>]`. A tool call whose input is a string is sent as a custom (free-form) tool
 * call. Images keep their `detail` (except `original`, unknown to openai 6.x's chat types).
 *
 * @example
 * const body = { model: "gpt-4.1", messages: toOpenAIChat(conversation.snapshot().messages) };
 */
export function toOpenAIChat(
  messages: readonly Message[],
  options: OpenAIChatExportOptions = {},
): OpenAIChatMessage[] {
  return planExport(messages, { ...options, format: FORMAT }).flatMap((entry) => convert(entry, options));
}

/**
 * The OpenAI chat form of `messages` as plain JSON (no `undefined`, no class instances), for dumps and logs.
 * Blob-store references become placeholders instead of errors, so any stored session can be dumped.
 *
 * @example
 * console.log(JSON.stringify(toOpenAIChatJson(messages), null, 2));
 */
export function toOpenAIChatJson(
  messages: readonly Message[],
  options: OpenAIChatExportOptions = {},
): JsonValue[] {
  return toOpenAIChat(messages, { references: "placeholder", ...options }) as unknown as JsonValue[];
}
