import type { JsonValue } from "../model/message.ts";

/** A function call requested by a CLI model's reply. */
export interface CliToolCall {
  readonly name: string;
  readonly arguments: JsonValue;
}

/** What a CLI model's reply means: plain text, or function calls in the `CLI_JSON_FORMAT` shape. */
export type CliReply =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "tool-calls"; readonly toolCalls: readonly CliToolCall[] };

const FENCE = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/;

/**
 * Reads a reply: when the whole reply (optionally in a ```json fence) is `{"tool_calls": [...]}` with a name per
 * call, it is a list of function calls; anything else is text.
 *
 * @example
 * parseCliReply('{"tool_calls":[{"name":"desktop","arguments":{"task":"ls"}}]}');
 * // { kind: "tool-calls", toolCalls: [{ name: "desktop", arguments: { task: "ls" } }] }
 */
export function parseCliReply(reply: string): CliReply {
  const trimmed = reply.trim();
  const body = FENCE.exec(trimmed)?.[1] ?? trimmed;
  if (!body.startsWith("{")) return { kind: "text", text: reply };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { kind: "text", text: reply };
  }
  const calls = (parsed as { tool_calls?: unknown }).tool_calls;
  if (!Array.isArray(calls) || calls.length === 0) return { kind: "text", text: reply };
  const toolCalls: CliToolCall[] = [];
  for (const call of calls) {
    const name = (call as { name?: unknown } | null)?.name;
    if (typeof name !== "string" || name === "") return { kind: "text", text: reply };
    const args = (call as { arguments?: JsonValue }).arguments;
    toolCalls.push({ name, arguments: args ?? {} });
  }
  return { kind: "tool-calls", toolCalls };
}

/**
 * The value at a dot path (`"result"`, `"response.text"`) of parsed JSON output, or `undefined`.
 *
 * @example
 * valueAtPath({ result: "hi" }, "result"); // "hi"
 */
export function valueAtPath(value: unknown, path: string): unknown {
  let current = value;
  for (const key of path.split(".")) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}
