import { z } from "zod";
import { jsonValueSchema } from "../model/schemas.ts";
import type { JsonValue } from "../model/message.ts";
import { stripBinaryFields } from "./strip-binary-fields.ts";

/** One tool call an executor made, with its result (as reported in `agent_result.tool_summary`). */
export interface ToolCallRecord {
  readonly name: string;
  readonly input: JsonValue;
  readonly result: string | JsonValue;
  readonly isError?: boolean;
}

/** Schema of a tool call record. */
export const toolCallRecordSchema = z.object({
  name: z.string().min(1),
  input: jsonValueSchema,
  result: jsonValueSchema,
  isError: z.boolean().optional(),
});

/** How much of each call goes into the summary prefix. */
export interface ToolSummaryLimits {
  /** Characters of a call's JSON arguments kept (default 200). */
  readonly maxInputChars?: number;
  /** Characters of a call's result kept (default 300). */
  readonly maxResultChars?: number;
  /** Calls listed; the rest are counted (default 10). */
  readonly maxCalls?: number;
}

const ELLIPSIS = "…";

/**
 * `value` cut to at most `max` characters, ending with "…" when cut. Never splits a surrogate pair.
 *
 * @example
 * truncateText("abcdef", 4); // "abc…"
 */
export function truncateText(value: string, max: number): string {
  if (value.length <= max) return value;
  if (max <= 0) return "";
  let end = max - 1;
  const last = value.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return value.slice(0, end) + ELLIPSIS;
}

function resultText(result: string | JsonValue): string {
  const stripped = stripBinaryFields(result);
  return typeof stripped === "string" ? stripped : JSON.stringify(stripped);
}

/**
 * The prefix recorded before an executor's reply so the conversation agent can tell what was done:
 * `[<label> used: Called: tool({...})\nResult: …]`, one `Called`/`Result` pair per call, each truncated, with
 * screenshots and other encoded binaries left out (`stripBinaryFields`).
 * Returns `undefined` when no tool was called.
 *
 * @example
 * formatToolSummary("Desktop agent", [{ name: "execute_cli", input: { command: "ls ~/Desktop" }, result: "file1.txt file2.txt" }]);
 * // '[Desktop agent used: Called: execute_cli({"command":"ls ~/Desktop"})\nResult: file1.txt file2.txt]'
 */
export function formatToolSummary(
  label: string,
  calls: readonly ToolCallRecord[],
  limits: ToolSummaryLimits = {},
): string | undefined {
  if (calls.length === 0) return undefined;
  const maxInput = limits.maxInputChars ?? 200;
  const maxResult = limits.maxResultChars ?? 300;
  const maxCalls = limits.maxCalls ?? 10;
  const lines = calls.slice(0, maxCalls).map((call) => {
    const input = truncateText(JSON.stringify(stripBinaryFields(call.input)) ?? "null", maxInput);
    const result = truncateText(resultText(call.result), maxResult);
    return `Called: ${call.name}(${input})\n${call.isError ? "Error" : "Result"}: ${result}`;
  });
  if (calls.length > maxCalls) lines.push(`(and ${calls.length - maxCalls} more calls)`);
  return `[${label} used: ${lines.join("\n")}]`;
}
