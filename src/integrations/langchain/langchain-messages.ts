import {
  AIMessage,
  HumanMessage,
  mapStoredMessagesToChatMessages,
  ToolMessage,
  type BaseMessage,
  type StoredMessage,
  type ContentBlock as LangChainBlock,
  type UsageMetadata,
} from "@langchain/core/messages";
import type { AssistantInput } from "../../conversation/conversation.ts";
import { canonicalJson } from "../../model/blocks.ts";
import type {
  ContentBlock,
  FileBlock,
  ImageBlock,
  JsonValue,
  Message,
  ToolResultBlock,
  Usage,
} from "../../model/message.ts";
import type { FeedEntry } from "../shared/session-feed.ts";

type Standard = LangChainBlock.Standard;

function base64(data: string | Uint8Array): string {
  return typeof data === "string" ? data : Buffer.from(data).toString("base64");
}

/** A LangChain multimodal block as a ctxkit image or file block (provider file ids are kept as a `url`). */
function mediaBlock(
  block: Standard & { type: "image" | "file" | "audio" | "video" },
): ImageBlock | FileBlock {
  const fallback = block.type === "image" ? "image/*" : "application/octet-stream";
  const mediaType = block.mimeType ?? fallback;
  const location =
    block.data !== undefined
      ? { data: base64(block.data) }
      : { url: block.url ?? `file-id:${block.fileId ?? ""}` };
  return block.type === "image"
    ? { type: "image", mediaType, ...location }
    : { type: "file", mediaType, ...location };
}

function blockOf(block: Standard): ContentBlock | undefined {
  switch (block.type) {
    case "text":
      // An AI message with only tool calls has content "": no text block for it.
      return block.text === "" ? undefined : { type: "text", text: block.text };
    case "reasoning":
      return { type: "reasoning", text: block.reasoning };
    case "text-plain":
      return block.text === undefined
        ? mediaBlock({ ...block, type: "file" })
        : { type: "text", text: block.text };
    case "image":
    case "file":
    case "audio":
    case "video":
      return mediaBlock(block);
    default:
      // Tool calls are read from `tool_calls`; server-side tool traffic and provider extras are not history.
      return undefined;
  }
}

function textOf(blocks: readonly ContentBlock[]): string {
  return blocks.map((block) => (block.type === "text" ? block.text : "")).join("");
}

function usageOf(usage: UsageMetadata | undefined): Usage | undefined {
  if (usage === undefined) return undefined;
  const cacheRead = usage.input_token_details?.cache_read;
  const cacheWrite = usage.input_token_details?.cache_creation;
  const reasoning = usage.output_token_details?.reasoning;
  return {
    input: usage.input_tokens,
    output: usage.output_tokens,
    ...(cacheRead !== undefined && { cacheRead }),
    ...(cacheWrite !== undefined && { cacheWrite }),
    ...(reasoning !== undefined && { reasoning }),
  };
}

function stringField(record: Record<string, unknown>, ...keys: string[]): string | undefined {
  for (const key of keys) if (typeof record[key] === "string") return record[key];
  return undefined;
}

/** An `AIMessage` as the reply a session records: text and reasoning, then tool calls, with usage and model. */
export function replyOf(message: AIMessage): AssistantInput {
  const blocks: ContentBlock[] = message.contentBlocks
    .map(blockOf)
    .filter((block): block is ContentBlock => block !== undefined);
  for (const call of message.tool_calls ?? [])
    blocks.push({ type: "tool-call", id: call.id ?? "", name: call.name, input: call.args as JsonValue });
  const usage = usageOf(message.usage_metadata);
  const metadata = message.response_metadata as Record<string, unknown>;
  const model = stringField(metadata, "model_name", "model");
  const provider = stringField(metadata, "model_provider");
  const finishReason = stringField(metadata, "finish_reason", "stop_reason");
  return {
    content: blocks,
    ...(usage !== undefined && { usage }),
    ...(model !== undefined && { model }),
    ...(provider !== undefined && { provider }),
    ...(finishReason !== undefined && { finishReason }),
  };
}

function toolResultOf(message: ToolMessage, toolName: string): Omit<ToolResultBlock, "type"> {
  const blocks =
    typeof message.content === "string"
      ? [{ type: "text" as const, text: message.content }]
      : message.contentBlocks.map(blockOf).filter((block) => block !== undefined);
  const attachments = blocks.filter((block) => block.type === "image" || block.type === "file");
  return {
    callId: message.tool_call_id,
    toolName,
    content: textOf(blocks),
    ...(message.status === "error" && { isError: true }),
    ...(attachments.length > 0 && { attachments }),
  };
}

/**
 * Reads a LangChain message as what a ctxkit session records (`undefined` for system messages, which the agent
 * passes separately, and other kinds). `toolName` names a tool message's tool when the message does not.
 */
export function entryOf(message: BaseMessage, toolName: (callId: string) => string): FeedEntry | undefined {
  if (AIMessage.isInstance(message)) return { role: "assistant", reply: replyOf(message) };
  if (ToolMessage.isInstance(message))
    return {
      role: "tool",
      result: toolResultOf(message, message.name ?? toolName(message.tool_call_id)),
    };
  if (HumanMessage.isInstance(message)) {
    const content = message.contentBlocks.map(blockOf).filter((block) => block !== undefined);
    return { role: "user", content };
  }
  return undefined;
}

function standardOf(block: ContentBlock): Standard | undefined {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "reasoning":
      return { type: "reasoning", reasoning: block.text };
    case "image":
    case "file":
      if (block.data !== undefined) return { type: block.type, mimeType: block.mediaType, data: block.data };
      if (block.url !== undefined) return { type: block.type, mimeType: block.mediaType, url: block.url };
      return { type: "text", text: `[${block.type} ${block.ref ?? ""}]` };
    default:
      return undefined;
  }
}

/** Plain text as a string (what LangChain's own messages hold), anything else as standard content blocks. */
function contentOf(blocks: readonly ContentBlock[]): string | Standard[] {
  const standard = blocks.map(standardOf).filter((block) => block !== undefined);
  return standard.every((block) => block.type === "text") ? textOf(blocks) : standard;
}

function toolContent(block: ToolResultBlock): string | Standard[] {
  const text = typeof block.content === "string" ? block.content : JSON.stringify(block.content);
  const attachments = (block.attachments ?? []).map(standardOf).filter((part) => part !== undefined);
  return attachments.length === 0 ? text : [{ type: "text", text }, ...attachments];
}

/**
 * A ctxkit message (of the governed view) as a LangChain message: a summary is a human message, an assistant
 * message carries its tool calls as `tool_calls`, a tool message answers its call by id.
 */
export function toLangChain(message: Message): BaseMessage {
  // The id of the LangChain message it was recorded from, when it was: never one of ctxkit's own for it.
  const stored = message.metadata?.[LANGCHAIN_MESSAGE_KEY] as { data?: { id?: unknown } } | undefined;
  const id = typeof stored?.data?.id === "string" ? stored.data.id : message.id;
  if (message.role === "tool") {
    const block = message.content.find((part): part is ToolResultBlock => part.type === "tool-result");
    if (block === undefined) return new HumanMessage({ id, content: contentOf(message.content) });
    return new ToolMessage({
      id,
      content: toolContent(block),
      tool_call_id: block.callId,
      name: block.toolName,
      status: block.isError === true ? "error" : "success",
    });
  }
  if (message.role === "assistant") {
    const tool_calls = message.content.flatMap((block) =>
      block.type === "tool-call"
        ? [
            {
              type: "tool_call" as const,
              id: block.id,
              name: block.name,
              args:
                typeof block.input === "object" && block.input !== null && !Array.isArray(block.input)
                  ? block.input
                  : { input: block.input },
            },
          ]
        : [],
    );
    return new AIMessage({ id, content: contentOf(message.content), tool_calls });
  }
  return new HumanMessage({ id, content: contentOf(message.content) });
}

/** Metadata key under which a stored message keeps the LangChain message it was recorded from. */
export const LANGCHAIN_MESSAGE_KEY = "langchain.message";

/** The content the message `entry` reads as would have rebuilt as a LangChain message (see `toLangChain`). */
function rebuiltContent(entry: FeedEntry): BaseMessage["content"] {
  if (entry.role === "tool") return toolContent({ type: "tool-result", ...entry.result });
  const content = entry.role === "user" ? entry.content : entry.reply.content;
  return contentOf(typeof content === "string" ? [{ type: "text", text: content }] : content);
}

/**
 * What a session keeps of a LangChain message beside the message it records (`FeedItem.metadata`): its stored
 * form (`toDict()`), without its content when the recorded blocks give that back (a tool's output is not kept
 * twice). `originalOf` makes the message again from it after a restart.
 */
export function originalMetadata(message: BaseMessage, entry: FeedEntry): { [key: string]: JsonValue } {
  const { type, data } = message.toDict();
  // null in its place (the key order of the message's stored form is kept): the blocks give it back.
  const same = JSON.stringify(data.content) === JSON.stringify(rebuiltContent(entry));
  const kept = same ? { ...data, content: null } : data;
  return { [LANGCHAIN_MESSAGE_KEY]: JSON.parse(JSON.stringify({ type, data: kept })) as JsonValue };
}

/**
 * The LangChain message a stored message was recorded from, made again from its metadata (`originalMetadata`),
 * with the content the message holds now: undefined when it holds none, or when governance rewrote it into
 * something the original no longer reads as (its id and extras would then misname it).
 */
export function originalOf(message: Message): BaseMessage | undefined {
  const stored = message.metadata?.[LANGCHAIN_MESSAGE_KEY] as
    { type?: string; data?: Record<string, unknown> } | undefined;
  if (stored?.type === undefined || stored.data === undefined) return undefined;
  const rebuilt = toLangChain(message);
  const data = { ...stored.data, content: stored.data["content"] ?? rebuilt.content };
  const [original] = mapStoredMessagesToChatMessages([{ type: stored.type, data } as StoredMessage]);
  if (original === undefined) return undefined;
  const entry = entryOf(original, () => "tool");
  if (entry === undefined) return undefined;
  const blocks: readonly ContentBlock[] =
    entry.role === "tool"
      ? [{ type: "tool-result", ...entry.result, toolName: toolNameOf(message) ?? entry.result.toolName }]
      : entry.role === "user"
        ? entry.content
        : typeof entry.reply.content === "string"
          ? [{ type: "text", text: entry.reply.content }]
          : entry.reply.content;
  return canonicalJson(blocks) === canonicalJson(message.content) ? original : undefined;
}

function toolNameOf(message: Message): string | undefined {
  const block = message.content.find((part): part is ToolResultBlock => part.type === "tool-result");
  return block?.toolName;
}
