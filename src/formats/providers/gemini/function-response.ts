import type { JsonValue } from "../../../model/message.ts";

type JsonObject = { [key: string]: JsonValue };

function isObject(value: JsonValue): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function soleKey(value: JsonObject): string | undefined {
  const keys = Object.keys(value);
  return keys.length === 1 ? keys[0] : undefined;
}

/**
 * The `functionResponse.response` object for a tool result, following Gemini's documented convention:
 * `{ output: … }` for a result, `{ error: … }` for a failure. A JSON object result is sent as-is, unless its only
 * key is `output` or `error` (it is then wrapped in `output` so it cannot be misread).
 *
 * @example
 * functionResponseOf("3 files", false); // { output: "3 files" }
 * functionResponseOf({ files: 3 }, false); // { files: 3 }
 */
export function functionResponseOf(content: string | JsonValue, isError: boolean | undefined): JsonObject {
  if (isError === true) return { error: content };
  if (isObject(content) && soleKey(content) !== "output" && soleKey(content) !== "error") return content;
  return { output: content };
}

/** Reads a `functionResponse.response` back (see `functionResponseOf`). */
export function toolResultOf(response: JsonObject): { content: string | JsonValue; isError?: true } {
  const key = soleKey(response);
  if (key === "error") return { content: response["error"]!, isError: true };
  if (key === "output") return { content: response["output"]! };
  return { content: response };
}
