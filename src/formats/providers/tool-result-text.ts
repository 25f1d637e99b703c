import type { JsonValue } from "../../model/message.ts";

/**
 * Prefix marking a failed tool result in formats without an error flag (OpenAI chat and Responses). The model
 * reads it as a plain statement that the tool failed; `decodeToolResultText` turns it back into `isError`.
 */
export const TOOL_ERROR_PREFIX = "[tool error] ";

/**
 * The compact JSON a string holds, when it is exactly `JSON.stringify` of a non-string value; otherwise
 * `undefined`. Only exact serialisations count, so reading a result back never changes a byte the model saw.
 *
 * @example
 * compactJson('{"ok":true}'); // { ok: true }
 * compactJson('{ "ok": true }'); // undefined (not compact)
 */
export function compactJson(text: string): JsonValue | undefined {
  const first = text.charCodeAt(0);
  // Cheap pre-check: JSON starts with { [ - a digit, t(rue), f(alse) or n(ull).
  if (!(
    first === 123 ||
    first === 91 ||
    first === 45 ||
    (first >= 48 && first <= 57) ||
    "tfn".includes(text[0] ?? "")
  ))
    return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value === "string" || JSON.stringify(value) !== text) return undefined;
  return value as JsonValue;
}

/**
 * The text a tool result is sent as in formats that only take strings: text as-is, JSON serialised, and (when
 * `errorPrefix` is set, for formats without an error flag) `[tool error] ` before a failed result.
 *
 * @example
 * encodeToolResultText({ exitCode: 1 }, true, true); // '[tool error] {"exitCode":1}'
 */
export function encodeToolResultText(
  content: string | JsonValue,
  isError: boolean | undefined,
  errorPrefix: boolean,
): string {
  const text = typeof content === "string" ? content : JSON.stringify(content);
  return errorPrefix && isError === true ? `${TOOL_ERROR_PREFIX}${text}` : text;
}

/**
 * Reads a tool result text back: the error prefix (when `errorPrefix` is set) becomes `isError`, and a text that
 * is exactly compact JSON of a non-string value becomes JSON content. A plain-text result that happens to be
 * compact JSON (`42`, `{"a":1}`) therefore comes back as JSON; the model sees the same bytes either way.
 *
 * @example
 * decodeToolResultText('[tool error] {"exitCode":1}', true); // { content: { exitCode: 1 }, isError: true }
 */
export function decodeToolResultText(
  text: string,
  errorPrefix: boolean,
): { content: string | JsonValue; isError?: true } {
  const failed = errorPrefix && text.startsWith(TOOL_ERROR_PREFIX);
  const body = failed ? text.slice(TOOL_ERROR_PREFIX.length) : text;
  const content = compactJson(body) ?? body;
  return failed ? { content, isError: true } : { content };
}
