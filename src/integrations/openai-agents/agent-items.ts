import type { AgentInputItem } from "@openai/agents";
import type { ContentBlock, JsonValue, Message, MessageInput, ToolResultBlock } from "../../model/message.ts";
import { compactJson } from "../../formats/providers/tool-result-text.ts";
import { wrapSummary } from "../../formats/providers/summary-envelope.ts";

/** Metadata key under which a stored message keeps the Agents SDK items it was made from, verbatim. */
export const AGENT_ITEMS_KEY = "openaiAgents.items";

type Item = AgentInputItem;
type Side = "user" | "system" | "assistant" | "tool";

function sideOf(item: Item): Side {
  if (item.type === undefined || item.type === "message") {
    const role = (item as { role?: string }).role;
    return role === "user" || role === "system" ? role : "assistant";
  }
  return item.type === "function_call_result" ? "tool" : "assistant";
}

function partText(part: unknown): string {
  if (typeof part === "string") return part;
  if (typeof part !== "object" || part === null) return "";
  const { type, text, refusal, transcript } = part as {
    type?: string;
    text?: unknown;
    refusal?: unknown;
    transcript?: unknown;
  };
  if (typeof text === "string") return text;
  if (typeof refusal === "string") return refusal;
  if (typeof transcript === "string") return transcript;
  return `[${type ?? "part"}]`;
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  return Array.isArray(content) ? content.map(partText).join("\n") : partText(content);
}

function parsedArguments(text: string): JsonValue {
  if (text === "") return {};
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}

/** The ctxkit blocks of one assistant-side item (a message, a function call, reasoning, or any other call). */
function assistantBlocks(item: Item): ContentBlock[] {
  switch (item.type) {
    case undefined:
    case "message":
      return [{ type: "text", text: contentText((item as { content?: unknown }).content) }];
    case "function_call":
      return [
        { type: "tool-call", id: item.callId, name: item.name, input: parsedArguments(item.arguments) },
      ];
    case "reasoning":
      return [{ type: "reasoning", text: contentText(item.content) }];
    default:
      // Hosted, computer, shell and other items: kept verbatim in metadata, counted by their JSON.
      return [{ type: "text", text: `[${item.type}] ${JSON.stringify(item)}` }];
  }
}

function toolResult(item: Extract<Item, { type: "function_call_result" }>): ToolResultBlock {
  const text = contentText(item.output);
  return {
    type: "tool-result",
    callId: item.callId,
    toolName: item.name,
    content: compactJson(text) ?? text,
    ...(item.status === "incomplete" && { isError: true }),
  };
}

/**
 * Agents SDK items as ctxkit messages to store: a user or system message each; consecutive assistant-side items
 * (messages, function calls, reasoning, hosted calls) as one assistant message; each function result as a tool
 * message. Every message keeps its items verbatim under `AGENT_ITEMS_KEY`, so they come back unchanged.
 *
 * @example
 * itemsToMessages([{ role: "user", content: "hi" }]); // [{ role: "user", content: [{ type: "text", text: "hi" }], … }]
 */
export function itemsToMessages(items: readonly Item[]): MessageInput[] {
  const messages: MessageInput[] = [];
  let group: Item[] = [];
  const flush = () => {
    if (group.length === 0) return;
    messages.push({
      role: "assistant",
      content: group.flatMap(assistantBlocks),
      metadata: { [AGENT_ITEMS_KEY]: group as unknown as JsonValue },
    });
    group = [];
  };
  for (const item of items) {
    const side = sideOf(item);
    if (side === "assistant") {
      group.push(item);
      continue;
    }
    flush();
    const metadata = { [AGENT_ITEMS_KEY]: [item] as unknown as JsonValue };
    if (side === "tool")
      messages.push({
        role: "tool",
        content: [toolResult(item as Extract<Item, { type: "function_call_result" }>)],
        metadata,
      });
    else
      messages.push({
        role: side,
        content: [{ type: "text", text: contentText((item as { content?: unknown }).content) }],
        metadata,
      });
  }
  flush();
  return messages;
}

function storedItems(message: Message): Item[] | undefined {
  const items = message.metadata?.[AGENT_ITEMS_KEY];
  return Array.isArray(items) ? (items as unknown as Item[]) : undefined;
}

function text(blocks: readonly ContentBlock[]): string {
  return blocks.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n");
}

/** Items for a message governance wrote or rewrote (a summary, a truncated result, a notice). */
function rewrittenItems(message: Message): Item[] {
  if (message.kind === "summary") return [{ role: "user", content: text(wrapSummary(message.content)) }];
  switch (message.role) {
    case "system":
      return [{ role: "system", content: text(message.content) }];
    case "user":
      return [{ role: "user", content: text(message.content) }];
    case "tool":
      return message.content.flatMap((block): Item[] =>
        block.type === "tool-result"
          ? [
              {
                type: "function_call_result",
                callId: block.callId,
                name: block.toolName,
                status: "completed",
                output: typeof block.content === "string" ? block.content : JSON.stringify(block.content),
              },
            ]
          : [],
      );
    case "assistant": {
      const items: Item[] = [];
      for (const block of message.content) {
        if (block.type === "text")
          items.push({
            type: "message",
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text: block.text }],
          });
        else if (block.type === "tool-call")
          items.push({
            type: "function_call",
            callId: block.id,
            name: block.name,
            status: "completed",
            arguments: typeof block.input === "string" ? block.input : JSON.stringify(block.input),
          });
        // Reasoning governance rewrote is not sent: providers reject reasoning they cannot verify.
      }
      return items;
    }
  }
}

/**
 * Governed ctxkit messages back as Agents SDK items: a message governance did not touch (`untouched`) gives back
 * the items it was stored from, verbatim; anything else is written afresh (summaries in the summary envelope).
 *
 * @example
 * const items = messagesToItems(request.messages, new Set(history));
 */
export function messagesToItems(messages: readonly Message[], untouched: ReadonlySet<Message>): Item[] {
  return messages.flatMap((message) => {
    if (message.kind === "marker") return [];
    const items = untouched.has(message) ? storedItems(message) : undefined;
    return items ?? rewrittenItems(message);
  });
}
