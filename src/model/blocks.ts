import type {
  ContentBlock,
  JsonValue,
  Message,
  OpaqueBlock,
  TextBlock,
  ToolCallBlock,
  ToolResultBlock,
} from "./message.ts";

/** A text block. @example text("hello") */
export function text(value: string): TextBlock {
  return { type: "text", text: value };
}

/** The text of all text blocks of a message, joined by blank lines. */
export function messageText(message: Pick<Message, "content">): string {
  const parts: string[] = [];
  for (const block of message.content) if (block.type === "text") parts.push(block.text);
  return parts.join("\n\n");
}

/** The tool calls of a message, in order. */
export function toolCallsOf(message: Pick<Message, "content">): ToolCallBlock[] {
  return message.content.filter((block): block is ToolCallBlock => block.type === "tool-call");
}

/** The tool results of a message, in order. */
export function toolResultsOf(message: Pick<Message, "content">): ToolResultBlock[] {
  return message.content.filter((block): block is ToolResultBlock => block.type === "tool-result");
}

/** The text a tool result shows the model: strings as-is, JSON serialised. */
export function toolResultText(content: string | JsonValue): string {
  return typeof content === "string" ? content : JSON.stringify(content);
}

/**
 * A short name for an opaque block: its provider, its own type and, when it has one, the tool it calls.
 *
 * @example
 * opaqueBlockLabel({ type: "opaque", provider: "anthropic", data: { type: "server_tool_use", name: "web_search" } });
 * // "anthropic server_tool_use web_search"
 */
export function opaqueBlockLabel(block: OpaqueBlock): string {
  const { type, name } = block.data;
  const parts = [block.provider, type, name].flatMap((part) =>
    typeof part === "string" && part !== "" ? [part] : [],
  );
  return parts.join(" ");
}

/** True for blocks that cost fixed, large token amounts (images, files). */
export function isBinaryBlock(block: ContentBlock): boolean {
  return block.type === "image" || block.type === "file";
}

/** True when the message is a plain user instruction (not a governance summary, not a marker). */
export function isInstruction(message: Pick<Message, "role" | "kind">): boolean {
  return message.role === "user" && message.kind === undefined;
}

/** Canonical JSON: object keys sorted, so equal values serialise equally (used for hashing tool arguments). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, entry]) => entry !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, entry]) => `${JSON.stringify(key)}:${canonicalJson(entry)}`).join(",")}}`;
}
