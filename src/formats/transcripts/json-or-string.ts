import type { JsonValue } from "../../model/message.ts";

/**
 * Tool arguments as sent by OpenAI-style APIs are a JSON string: returns the parsed value, or the string itself
 * when it is not JSON (free-form tools, truncated arguments).
 *
 * @example
 * jsonOrString('{"cmd":"ls"}'); // { cmd: "ls" }
 * jsonOrString("*** Begin Patch"); // "*** Begin Patch"
 */
export function jsonOrString(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}

/**
 * A copy of `record` without its `undefined` entries, so optional fields stay absent (not `undefined`) and
 * the result is a valid JSON value.
 *
 * @example
 * definedEntries({ a: 1, b: undefined }); // { a: 1 }
 */
export function definedEntries<T extends Record<string, unknown>>(
  record: T,
): { [K in keyof T]?: Exclude<T[K], undefined> } {
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) if (value !== undefined) result[key] = value;
  return result as { [K in keyof T]?: Exclude<T[K], undefined> };
}
