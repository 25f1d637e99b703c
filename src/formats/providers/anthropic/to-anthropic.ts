import type {
  ContentBlock,
  FileBlock,
  ImageBlock,
  JsonValue,
  Message,
  OpaqueBlock,
} from "../../../model/message.ts";
import { UnsupportedError } from "../../../errors/errors.ts";
import { planExport, where, type ToolResultEntry, type UserEntry } from "../export-plan.ts";
import type { ExportOptions } from "../options.ts";
import { isPartOptionsCarrier } from "../part-options-carrier.ts";
import { orderResultParts } from "../result-part-order.ts";
import { textLayout } from "../text-parts.ts";
import { encodeToolResultText } from "../tool-result-text.ts";
import { storedExtras } from "../item-extras.ts";
import { toAnthropicMedia } from "./anthropic-media.ts";
import {
  ANTHROPIC_PROVIDER,
  BLOCK_EXTRAS_KEY,
  CONTENT_LIST_KEY,
  INLINE_SYSTEM_KEY,
  RESULT_PARTS_KEY,
  type AnthropicAssistantBlock,
  type AnthropicDocumentBlock,
  type AnthropicImageBlock,
  type AnthropicMessage,
  type AnthropicOtherBlock,
  type AnthropicPayload,
  type AnthropicTextBlock,
  type AnthropicToolResultBlock,
  type AnthropicUserBlock,
} from "./anthropic-message.ts";

/** An opaque block back as Anthropic sent it (a fresh copy: breakpoints may be added to it). */
function otherBlock(block: OpaqueBlock): AnthropicOtherBlock {
  return { ...block.data } as AnthropicOtherBlock;
}

/** Anthropic refuses empty text blocks (e.g. of a reply that was only usage or tool calls). */
const blankText = (block: ContentBlock): boolean => block.type === "text" && block.text === "";

function userBlocks(entry: UserEntry, options: ExportOptions): AnthropicUserBlock[] {
  return entry.blocks.flatMap((block, position): AnthropicUserBlock[] => {
    if (blankText(block)) return [];
    return [userBlock(block, position, entry, options)];
  });
}

function userBlock(
  block: ContentBlock,
  position: number,
  entry: UserEntry,
  options: ExportOptions,
): AnthropicUserBlock {
  if (block.type === "text") return { type: "text", text: block.text };
  if (block.type === "opaque") return otherBlock(block);
  const media = toAnthropicMedia(
    block as ImageBlock | FileBlock,
    `${where(entry.index)}.content[${position}]`,
    options,
  );
  // The document's settings ctxkit does not model (citations, context), from its place at import.
  return media.type === "document"
    ? { ...media, ...storedExtras(entry.message, BLOCK_EXTRAS_KEY, `document:${position}`) }
    : media;
}

/**
 * Appends a message, leaving out one with no content (Anthropic refuses empty content); a message of the same role
 * as the one before it, once a message between them was left out, is merged into it (the roles must alternate).
 */
function pushMessage(
  output: AnthropicMessage[],
  message: AnthropicMessage,
  state: { dropped: boolean },
): void {
  if (message.content.length === 0) {
    state.dropped = true;
    return;
  }
  const previous = output.at(-1);
  if (
    state.dropped &&
    previous !== undefined &&
    previous.role === message.role &&
    message.role !== "system"
  ) {
    const listed = (content: AnthropicMessage["content"]) =>
      typeof content === "string" ? [{ type: "text" as const, text: content }] : content;
    output[output.length - 1] = {
      ...previous,
      content: [...listed(previous.content), ...listed(message.content)],
    } as AnthropicMessage;
  } else output.push(message);
  state.dropped = false;
}

function userContent(blocks: AnthropicUserBlock[], message: Message): string | AnthropicUserBlock[] {
  const only = blocks[0];
  const listed = message.metadata?.[CONTENT_LIST_KEY] === true;
  return blocks.length === 1 && only?.type === "text" && !listed ? (only as AnthropicTextBlock).text : blocks;
}

function toolInput(input: JsonValue): { [key: string]: JsonValue } {
  // Anthropic takes only objects as tool input; free-form (string) input is wrapped.
  return typeof input === "object" && input !== null && !Array.isArray(input) ? input : { input };
}

function assistantBlock(
  block: ContentBlock,
  message: Message,
  at: string,
): AnthropicAssistantBlock | undefined {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "tool-call":
      return {
        ...storedExtras(message, BLOCK_EXTRAS_KEY, `tool_use:${block.id}`),
        type: "tool_use",
        id: block.id,
        name: block.name,
        input: toolInput(block.input),
      };
    case "reasoning":
      // Anthropic rejects thinking it cannot verify, so unsigned reasoning (another provider's) is not sent.
      if (isPartOptionsCarrier(block)) return undefined;
      // Another provider's signature is no Anthropic signature (it is refused as invalid).
      if (block.signedBy !== undefined && block.signedBy !== "anthropic") return undefined;
      if (block.redacted === true)
        return block.signature === undefined
          ? undefined
          : { type: "redacted_thinking", data: block.signature };
      return block.signature === undefined
        ? undefined
        : { type: "thinking", thinking: block.text, signature: block.signature };
    case "opaque":
      // planExport passes only Anthropic's own; a server tool's call and its result stay side by side.
      return otherBlock(block);
    default:
      throw new UnsupportedError(
        `${at}: Anthropic assistant messages cannot hold ${block.type} blocks; drop them first`,
      );
  }
}

function toolResult(
  { block, message, index }: ToolResultEntry,
  options: ExportOptions,
): AnthropicToolResultBlock {
  const attachments = block.attachments ?? [];
  const layout = textLayout(
    encodeToolResultText(block.content, block.isError, false),
    message,
    attachments.length > 0,
  );
  let content: AnthropicToolResultBlock["content"] =
    typeof layout === "string"
      ? layout
      : orderResultParts<AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock>(
          layout.map((text): AnthropicTextBlock => ({ type: "text", text })),
          attachments.map((attachment, position) =>
            toAnthropicMedia(attachment, `${where(index)}.content[0].attachments[${position}]`, options),
          ),
          message,
        );
  const others = resultParts(message);
  if (others.length > 0) {
    const parts =
      typeof content === "string"
        ? content === ""
          ? []
          : [{ type: "text" as const, text: content }]
        : content;
    for (const { at, block: part } of others) parts.splice(Math.min(at, parts.length), 0, part);
    content = parts;
  }
  return {
    type: "tool_result",
    tool_use_id: block.callId,
    content,
    ...(block.isError !== undefined && { is_error: block.isError }),
  };
}

function inlineSystemContent(message: Message): string | AnthropicTextBlock[] {
  const texts = message.content.flatMap((block) => (block.type === "text" ? [block.text] : []));
  if (texts.length === 1 && message.metadata?.[CONTENT_LIST_KEY] !== true) return texts[0]!;
  return texts.map((text) => ({ type: "text", text }));
}

/** The parts other than text and media a tool message was imported with, and their places in its content. */
function resultParts(message: Message): { at: number; block: AnthropicOtherBlock }[] {
  const parts = message.metadata?.[RESULT_PARTS_KEY];
  return Array.isArray(parts) ? (parts as unknown as { at: number; block: AnthropicOtherBlock }[]) : [];
}

function systemOf(messages: readonly Message[]): AnthropicPayload["system"] {
  const texts = messages.flatMap((message) =>
    message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])),
  );
  if (texts.length === 0) return undefined;
  return texts.length === 1 ? texts[0]! : texts.map((text) => ({ type: "text", text }));
}

/**
 * Converts ctxkit messages to an Anthropic Messages payload. System messages become the separate `system`
 * (wherever they stood), except those imported from inside `messages`, which go back to their place; consecutive tool messages become ONE user message of `tool_result` blocks (with
 * `is_error`, and images or files in the result's content list), followed in the same message by the user
 * message that comes right after them, if any. Reasoning becomes `thinking` (with its signature) or
 * `redacted_thinking`; reasoning without a signature is left out because Anthropic rejects it. Summaries are
 * user text in the summary envelope; markers are left out. A lone user text goes as a plain string unless it
 * was imported from a one-block list, which is sent back as that list (round trips are byte for byte).
 * Anthropic refuses empty text blocks and messages without content: empty text is left out,
 * and so is a message left empty (a reply that was only usage), the messages around it merged when they then
 * share a role.
 *
 * @example
 * const { system, messages } = toAnthropic(history);
 * await fetch(url, { body: JSON.stringify({ model, max_tokens: 1024, system, messages }) });
 */
export function toAnthropic(messages: readonly Message[], options: ExportOptions = {}): AnthropicPayload {
  const systems: Message[] = [];
  const output: AnthropicMessage[] = [];
  const state = { dropped: false };
  const push = (message: AnthropicMessage) => pushMessage(output, message, state);
  for (const entry of planExport(messages, {
    ...options,
    format: "Anthropic",
    mergeFollowingUser: true,
    opaqueProvider: ANTHROPIC_PROVIDER,
  })) {
    if (entry.kind === "system" && entry.message.metadata?.[INLINE_SYSTEM_KEY] === true)
      push({ role: "system", content: inlineSystemContent(entry.message) });
    else if (entry.kind === "system") systems.push(entry.message);
    else if (entry.kind === "user")
      push({ role: "user", content: userContent(userBlocks(entry, options), entry.message) });
    else if (entry.kind === "assistant") {
      const content = entry.message.content.flatMap((block, position) => {
        if (blankText(block)) return [];
        const converted = assistantBlock(block, entry.message, `${where(entry.index)}.content[${position}]`);
        return converted === undefined ? [] : [converted];
      });
      push({ role: "assistant", content });
    } else {
      const following = entry.followingUser === undefined ? [] : userBlocks(entry.followingUser, options);
      push({
        role: "user",
        content: [...entry.results.map((result) => toolResult(result, options)), ...following],
      });
    }
  }
  const system = systemOf(systems);
  return { ...(system !== undefined && { system }), messages: output };
}
