import type {
  ContentBlock,
  FileBlock,
  ImageBlock,
  JsonValue,
  Message,
  ReasoningBlock,
  TextBlock,
} from "../../../model/message.ts";
import { cameAsList } from "../content-list.ts";
import { planExport, where, type ToolResultEntry } from "../export-plan.ts";
import { functionArguments, isCustomToolCall } from "../function-arguments.ts";
import { unsupportedMediaError } from "../media.ts";
import type { ExportOptions } from "../options.ts";
import { orderResultParts } from "../result-part-order.ts";
import { textLayout } from "../text-parts.ts";
import { encodeToolResultText } from "../tool-result-text.ts";
import { storedExtras } from "../item-extras.ts";
import {
  ITEM_EXTRAS_KEY,
  MESSAGE_PARTS_KEY,
  type ResponsesOutputMessage,
  type ResponsesInputContent,
  type ResponsesInputItem,
  type ResponsesInputMessage,
  type ResponsesOpaqueItem,
} from "./openai-responses-item.ts";
import { toResponsesMedia } from "./responses-media.ts";
import { reasoningItemsOf } from "./responses-reasoning.ts";

/** Options of `toOpenAIResponses`. */
export interface OpenAIResponsesExportOptions extends ExportOptions {
  /** Role for system messages. Default: `developer` for messages imported from one, else `system`. */
  readonly systemRole?: "system" | "developer";
}

const FORMAT = "OpenAI Responses";

function messageContent(
  blocks: readonly ContentBlock[],
  message: Message,
  index: number,
  options: ExportOptions,
): string | ResponsesInputContent[] {
  const only = blocks[0];
  if (blocks.length === 1 && only?.type === "text" && !cameAsList(message)) return only.text;
  return blocks.map((block, position) =>
    block.type === "text"
      ? { type: "input_text", text: block.text }
      : toResponsesMedia(block as ImageBlock | FileBlock, `${where(index)}.content[${position}]`, options),
  );
}

/** The part counts `message` recorded for its multi-part message items (see `MESSAGE_PARTS_KEY`). */
function messageParts(message: Message): { readonly [firstText: string]: JsonValue } {
  const parts = message.metadata?.[MESSAGE_PARTS_KEY];
  return typeof parts === "object" && parts !== null && !Array.isArray(parts) ? parts : {};
}

function textPart(
  block: TextBlock,
  message: Message,
  index: number,
): ResponsesOutputMessage["content"][number] {
  if (block.refusal === true) return { type: "refusal", refusal: block.text };
  const extras = storedExtras(message, ITEM_EXTRAS_KEY, `part:${index}`);
  return { type: "output_text", text: block.text, annotations: [], ...extras };
}

function assistantItems(message: Message, index: number): ResponsesInputItem[] {
  const items: ResponsesInputItem[] = [];
  const parts = messageParts(message);
  let reasoning: ReasoningBlock[] = [];
  let textCount = 0;
  // The message item still taking parts, and how many more it takes.
  let open: { item: ResponsesOutputMessage; more: number } | undefined;
  const flushReasoning = (): void => {
    items.push(...reasoningItemsOf(reasoning));
    reasoning = [];
  };
  for (const [position, block] of message.content.entries()) {
    if (block.type === "reasoning") {
      reasoning.push(block);
      open = undefined;
      continue;
    }
    flushReasoning();
    if (block.type === "opaque") {
      // A built-in tool's item (planExport left only OpenAI's): sent back as it came.
      items.push(block.data as ResponsesOpaqueItem);
      open = undefined;
      continue;
    }
    if (block.type === "text") {
      const textIndex = textCount++;
      const part = textPart(block, message, textIndex);
      if (open !== undefined && open.more > 0) {
        open.item.content.push(part);
        open.more--;
        continue;
      }
      const count = parts[String(textIndex)];
      const item: ResponsesOutputMessage = {
        ...storedExtras(message, ITEM_EXTRAS_KEY, `message:${textIndex}`),
        type: "message",
        role: "assistant",
        content: [part],
      };
      items.push(item);
      open = { item, more: typeof count === "number" ? count - 1 : 0 };
      continue;
    }
    open = undefined;
    if (block.type === "tool-call") {
      const extras = storedExtras(message, ITEM_EXTRAS_KEY, `call:${block.id}`);
      items.push(
        isCustomToolCall(block)
          ? { ...extras, type: "custom_tool_call", call_id: block.id, name: block.name, input: block.input }
          : {
              ...extras,
              type: "function_call",
              call_id: block.id,
              name: block.name,
              arguments: functionArguments(block, message),
            },
      );
    } else
      throw unsupportedMediaError(
        `${where(index)}.content[${position}]`,
        FORMAT,
        "images or files from the assistant",
      );
  }
  flushReasoning();
  return items;
}

/**
 * The items of a user message: one `message` item, or — when it holds opaque blocks (the client's built-in tool
 * outputs, item references) — those items as they came, in place, with the blocks between them as messages.
 */
function userItems(
  blocks: readonly ContentBlock[],
  message: Message,
  index: number,
  options: ExportOptions,
): ResponsesInputItem[] {
  const items: ResponsesInputItem[] = [];
  let run: ContentBlock[] = [];
  const flush = (): void => {
    if (run.length === 0) return;
    items.push({
      ...(items.length === 0 ? storedExtras(message, ITEM_EXTRAS_KEY, "message") : {}),
      type: "message",
      role: "user",
      content: messageContent(run, message, index, options),
    });
    run = [];
  };
  for (const block of blocks) {
    if (block.type !== "opaque") {
      run.push(block);
      continue;
    }
    flush();
    items.push(block.data as ResponsesOpaqueItem);
  }
  flush();
  return items;
}

function outputItem(
  { block, message, index }: ToolResultEntry,
  customCalls: ReadonlySet<string>,
  options: ExportOptions,
): ResponsesInputItem {
  const attachments = block.attachments ?? [];
  const layout = textLayout(
    encodeToolResultText(block.content, block.isError, true),
    message,
    attachments.length > 0,
  );
  const output =
    typeof layout === "string"
      ? layout
      : orderResultParts(
          layout.map((text): ResponsesInputContent => ({ type: "input_text", text })),
          attachments.map((attachment, position) =>
            toResponsesMedia(attachment, `${where(index)}.content[0].attachments[${position}]`, options),
          ),
          message,
        );
  const type = customCalls.has(block.callId) ? "custom_tool_call_output" : "function_call_output";
  return { ...storedExtras(message, ITEM_EXTRAS_KEY, "output"), type, call_id: block.callId, output };
}

/**
 * Converts ctxkit messages to OpenAI Responses `input` items. System and user messages become `message` items
 * (system as `system` or `developer`); an assistant message becomes its items in order — `reasoning` (blocks of
 * one item merged back; reasoning without OpenAI material left out), one `message` per text block (or per
 * recorded multi-part item; a refusal is a `refusal` part), `function_call` (or `custom_tool_call` for string
 * input). Tool results become `function_call_output` items: a failure is prefixed `[tool error] `, JSON is
 * serialised, images and files go in the output list (in their recorded order). An image's `detail` is sent
 * (`auto` when unknown). Item and part fields kept from an import (`id`, `status`, `phase`, `annotations`) are
 * sent back, and so are OpenAI's opaque blocks (built-in tool items), as they came and at their place; other
 * providers' opaque blocks are left out.
 *
 * @example
 * await client.responses.create({ model: "gpt-5", input: toOpenAIResponses(history), store: false });
 */
export function toOpenAIResponses(
  messages: readonly Message[],
  options: OpenAIResponsesExportOptions = {},
): ResponsesInputItem[] {
  const customCalls = new Set(
    messages.flatMap((message) =>
      message.content.flatMap((block) =>
        block.type === "tool-call" && isCustomToolCall(block) ? [block.id] : [],
      ),
    ),
  );
  return planExport(messages, { ...options, format: FORMAT, opaqueProvider: "openai" }).flatMap(
    (entry): ResponsesInputItem[] => {
      switch (entry.kind) {
        case "system": {
          const role =
            options.systemRole ??
            (entry.message.metadata?.["openai.role"] === "developer" ? "developer" : "system");
          const item: ResponsesInputMessage = {
            ...storedExtras(entry.message, ITEM_EXTRAS_KEY, "message"),
            type: "message",
            role,
            content: messageContent(entry.message.content, entry.message, entry.index, options),
          };
          return [item];
        }
        case "user":
          return userItems(entry.blocks, entry.message, entry.index, options);
        case "assistant":
          return assistantItems(entry.message, entry.index);
        case "tools":
          return entry.results.map((result) => outputItem(result, customCalls, options));
      }
    },
  );
}
