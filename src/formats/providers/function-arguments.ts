import type { JsonValue } from "../../model/message.ts";

/**
 * The tool-call input held by an OpenAI-style `arguments` JSON string. Arguments that are not valid JSON (a model
 * can produce broken JSON), or that are a JSON string, are kept as the raw text so nothing is lost.
 *
 * @example
 * parseFunctionArguments('{"path":"a.ts"}'); // { path: "a.ts" }
 * parseFunctionArguments('{"path":'); // '{"path":'
 */
export function parseFunctionArguments(text: string): JsonValue {
  try {
    const value = JSON.parse(text) as JsonValue;
    return typeof value === "string" ? text : value;
  } catch {
    return text;
  }
}

/**
 * The `arguments` string of a tool-call input.
 *
 * @example
 * functionArguments({ path: "a.ts" }); // '{"path":"a.ts"}'
 */
export function functionArguments(input: JsonValue): string {
  return typeof input === "string" ? input : JSON.stringify(input);
}
