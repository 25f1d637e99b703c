import type {
  ContentBlock,
  JsonValue,
  Message,
  OpaqueBlock,
  ToolResultBlock,
} from "../../../model/message.ts";
import { listMetadata } from "../content-list.ts";
import { functionCallBlock, RawArguments } from "../function-arguments.ts";
import { buildMessages, userDraft, type MessageDraft } from "../message-builder.ts";
import type { ImportOptions } from "../options.ts";
import { attachmentPlaces } from "../result-part-order.ts";
import { joinTextParts } from "../text-parts.ts";
import { decodeToolResultText } from "../tool-result-text.ts";
import { validatePayload } from "../validate-payload.ts";
import { ExtrasCollector, extrasOf, type ItemExtras } from "../item-extras.ts";
import { ITEM_EXTRAS_KEY, MESSAGE_PARTS_KEY } from "./openai-responses-item.ts";
import {
  isClientItem,
  isMessageItem,
  opaqueItemOf,
  openAIResponsesInputSchema,
  type ParsedCallOutput,
  type ParsedModelledItem,
  type ParsedResponsesContent,
} from "./openai-responses-schema.ts";
import { fromResponsesMedia } from "./responses-media.ts";
import { reasoningBlocksOf } from "./responses-reasoning.ts";

function contentBlock(part: ParsedResponsesContent): ContentBlock {
  return part.type === "input_text" ? { type: "text", text: part.text } : fromResponsesMedia(part);
}

function blocksOf(content: string | readonly ParsedResponsesContent[]): ContentBlock[] {
  return typeof content === "string" ? [{ type: "text", text: content }] : content.map(contentBlock);
}

/** The tool message for an output item: text parts joined, media as attachments, their layout in metadata. */
function toolDraft(item: ParsedCallOutput, toolNames: ReadonlyMap<string, string>): MessageDraft {
  const result = {
    type: "tool-result" as const,
    callId: item.call_id,
    toolName: toolNames.get(item.call_id) ?? "",
  };
  const extras = new ExtrasCollector(ITEM_EXTRAS_KEY);
  extras.add("output", extrasOf(item, ["type", "call_id", "output"]));
  if (typeof item.output === "string") {
    const metadata = extras.metadata();
    const block: ToolResultBlock = { ...result, ...decodeToolResultText(item.output, true) };
    return { role: "tool", content: [block], ...(metadata !== undefined && { metadata }) };
  }
  const texts = item.output.flatMap((part) => (part.type === "input_text" ? [part.text] : []));
  const attachments = item.output.flatMap((part) =>
    part.type === "input_text" ? [] : [fromResponsesMedia(part)],
  );
  const joined = joinTextParts(texts, attachments.length > 0);
  const layout = {
    ...joined.metadata,
    ...attachmentPlaces(item.output.map((part) => part.type !== "input_text")),
  };
  const metadata = extras.metadata(Object.keys(layout).length > 0 ? layout : undefined);
  const block: ToolResultBlock = {
    ...result,
    ...decodeToolResultText(joined.text, true),
    ...(attachments.length > 0 && { attachments }),
  };
  return { role: "tool", content: [block], ...(metadata !== undefined && { metadata }) };
}

/** The assistant message being assembled from consecutive reasoning, message and call items. */
interface OpenAssistant {
  readonly content: ContentBlock[];
  readonly extras: ExtrasCollector;
  readonly rawArguments: RawArguments;
  /** Part counts of message items with several parts (see `MESSAGE_PARTS_KEY`). */
  readonly messageParts: { [firstText: string]: number };
  textCount: number;
}

/** The fields of an assistant text part to send back with it: non-empty `annotations`, and any others. */
function textPartExtras(part: { [key: string]: unknown }): ItemExtras | undefined {
  const extras = extrasOf(part, ["type", "text"]);
  const annotations = extras?.["annotations"];
  if (Array.isArray(annotations) && annotations.length === 0) delete extras!["annotations"];
  return extras !== undefined && Object.keys(extras).length > 0 ? extras : undefined;
}

/**
 * Converts OpenAI Responses `input` items to ctxkit messages. Consecutive `reasoning`, assistant `message` and
 * `function_call` / `custom_tool_call` items form one assistant message; each `function_call_output` becomes a
 * tool message (`[tool error] ` → `isError`, compact JSON → JSON, images and files → attachments, their text
 * parts and order recorded). Reasoning keeps its item id and encrypted content in `providerData.openai`;
 * `refusal` parts become text blocks marked `refusal`; other item and part fields (`id`, `status`, `phase`,
 * `annotations`) are kept in `metadata["openai.items"]`, and the part counts of multi-part assistant messages in
 * `metadata["openai.messageParts"]`, so the items go back unchanged. Items of any other type (built-in tool calls
 * and outputs such as `web_search_call` or `local_shell_call_output`, `item_reference`, …) become opaque blocks
 * (`provider: "openai"`, the item as sent) at their place: the model's in the assistant message, the client's
 * (`isClientItem`) in a user message of their own.
 *
 * @example
 * const messages = fromOpenAIResponses([{ role: "user", content: "Hi" }]);
 */
export function fromOpenAIResponses(payload: unknown, options: ImportOptions = {}): Message[] {
  const items = validatePayload(openAIResponsesInputSchema, payload, "input", "OpenAI Responses input items");
  const drafts: MessageDraft[] = [];
  const toolNames = new Map<string, string>();
  let assistant: OpenAssistant | undefined;
  const openAssistant = (): OpenAssistant =>
    (assistant ??= {
      content: [],
      extras: new ExtrasCollector(ITEM_EXTRAS_KEY),
      rawArguments: new RawArguments(),
      messageParts: {},
      textCount: 0,
    });
  const close = (): void => {
    if (assistant === undefined) return;
    const parts = assistant.messageParts;
    const base = assistant.rawArguments.metadata();
    const metadata = assistant.extras.metadata(
      Object.keys(parts).length > 0 ? { ...base, [MESSAGE_PARTS_KEY]: parts } : base,
    );
    drafts.push({
      role: "assistant",
      content: assistant.content,
      ...(metadata !== undefined && { metadata }),
    });
    assistant = undefined;
  };
  // The user message of client-side opaque items being assembled (consecutive ones share it).
  let clientItems: ContentBlock[] | undefined;
  for (const entry of items) {
    const opaque = opaqueItemOf(entry);
    if (opaque !== undefined) {
      const block: OpaqueBlock = {
        type: "opaque",
        provider: "openai",
        data: opaque as { [key: string]: JsonValue },
      };
      if (isClientItem(opaque.type)) {
        close();
        if (clientItems === undefined) {
          clientItems = [];
          drafts.push({ role: "user", content: clientItems });
        }
        clientItems.push(block);
      } else {
        clientItems = undefined;
        openAssistant().content.push(block);
      }
      continue;
    }
    clientItems = undefined;
    const item = entry as ParsedModelledItem;
    if (item.type === "function_call_output" || item.type === "custom_tool_call_output") {
      close();
      drafts.push(toolDraft(item, toolNames));
      continue;
    }
    if (isMessageItem(item) && item.role !== "assistant") {
      close();
      const extras = new ExtrasCollector(ITEM_EXTRAS_KEY);
      extras.add("message", extrasOf(item, ["type", "role", "content"]));
      const blocks = blocksOf(item.content);
      const list = listMetadata(item.content, blocks);
      if (item.role === "user") {
        const draft = userDraft(blocks);
        const metadata = extras.metadata(list);
        drafts.push({ ...draft, ...(metadata !== undefined && { metadata }) });
      } else {
        const base = { ...(item.role === "developer" && { "openai.role": "developer" }), ...list };
        const metadata = extras.metadata(Object.keys(base).length > 0 ? base : undefined);
        drafts.push({ role: "system", content: blocks, ...(metadata !== undefined && { metadata }) });
      }
      continue;
    }
    const current = openAssistant();
    if (item.type === "reasoning") current.content.push(...reasoningBlocksOf(item));
    else if (item.type === "function_call" || item.type === "custom_tool_call") {
      current.content.push(
        item.type === "function_call"
          ? functionCallBlock(item.call_id, item.name, item.arguments, (text) =>
              current.rawArguments.parse(item.call_id, text),
            )
          : { type: "tool-call", id: item.call_id, name: item.name, input: item.input },
      );
      current.extras.add(
        `call:${item.call_id}`,
        extrasOf(item, ["type", "call_id", "name", "arguments", "input"]),
      );
      toolNames.set(item.call_id, item.name);
    } else if (isMessageItem(item) && item.role === "assistant") {
      const parts = typeof item.content === "string" ? [item.content] : item.content;
      // The item's fields, and its number of parts when several, are kept under the index of its first text.
      current.extras.add(`message:${current.textCount}`, extrasOf(item, ["type", "role", "content"]));
      if (parts.length > 1) current.messageParts[String(current.textCount)] = parts.length;
      for (const part of parts) {
        const index = current.textCount++;
        if (typeof part === "string") current.content.push({ type: "text", text: part });
        else if (part.type === "refusal")
          current.content.push({ type: "text", text: part.refusal, refusal: true });
        else {
          current.content.push({ type: "text", text: part.text });
          current.extras.add(`part:${index}`, textPartExtras(part));
        }
      }
    }
  }
  close();
  return buildMessages(drafts, options);
}
