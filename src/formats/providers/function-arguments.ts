import { canonicalJson } from "../../model/blocks.ts";
import type { JsonValue, Message, ToolCallBlock } from "../../model/message.ts";

/**
 * Metadata key under which an imported message keeps the original `arguments` text of its calls, when it is
 * not what `JSON.stringify` would write (models often emit `{"a": 1}` with spaces). Sending the same bytes back
 * keeps the provider's prompt cache valid.
 */
export const RAW_ARGUMENTS_KEY = "openai.arguments";

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
 * The `arguments` string of a tool call: the original text kept in `message.metadata` when it still parses to
 * the call's input, else `JSON.stringify` of the input.
 *
 * @example
 * functionArguments({ type: "tool-call", id: "c", name: "f", input: { path: "a.ts" } }); // '{"path":"a.ts"}'
 */
export function functionArguments(call: ToolCallBlock, message?: Message): string {
  const stored = message?.metadata?.[RAW_ARGUMENTS_KEY];
  const raw =
    typeof stored === "object" && stored !== null && !Array.isArray(stored) ? stored[call.id] : undefined;
  if (typeof raw === "string" && canonicalJson(parseFunctionArguments(raw)) === canonicalJson(call.input))
    return raw;
  return typeof call.input === "string" ? call.input : JSON.stringify(call.input);
}

/**
 * A function call's block from its `arguments` text (parsed by `parse`, `parseFunctionArguments` by default):
 * arguments that do not parse are kept as text and marked `unparsed`, so the call is sent back as a function call.
 *
 * @example
 * functionCallBlock("c1", "read", '{"path":'); // { …, input: '{"path":', unparsed: true }
 */
export function functionCallBlock(
  id: string,
  name: string,
  argumentsText: string,
  parse: (text: string) => JsonValue = parseFunctionArguments,
): ToolCallBlock {
  const input = parse(argumentsText);
  return {
    type: "tool-call",
    id,
    name,
    input,
    ...(typeof input === "string" && { unparsed: true as const }),
  };
}

/** Whether a call goes to OpenAI as a free-form (custom) tool's call: string input not marked `unparsed`. */
export function isCustomToolCall(call: ToolCallBlock): call is ToolCallBlock & { readonly input: string } {
  return typeof call.input === "string" && call.unparsed !== true;
}

/** Records, for `message.metadata`, the arguments texts that `JSON.stringify` would not reproduce. */
export class RawArguments {
  readonly #texts: Record<string, string> = {};

  /** Parses `text` and remembers it when re-serialising would change it. */
  parse(callId: string, text: string): JsonValue {
    const input = parseFunctionArguments(text);
    if (typeof input !== "string" && JSON.stringify(input) !== text) this.#texts[callId] = text;
    return input;
  }

  /** The metadata entry (`undefined` when every text was already compact). */
  metadata(): { [RAW_ARGUMENTS_KEY]: Record<string, string> } | undefined {
    return Object.keys(this.#texts).length > 0 ? { [RAW_ARGUMENTS_KEY]: { ...this.#texts } } : undefined;
  }
}
