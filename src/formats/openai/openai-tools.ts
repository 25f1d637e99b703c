import type { JsonValue } from "../../model/message.ts";
import type { NeutralToolDefinition } from "../providers/anthropic/anthropic-tools.ts";

/** A function tool as OpenAI's Chat Completions API takes it in `tools`. */
export interface OpenAIFunctionTool {
  readonly type: "function";
  readonly function: {
    readonly name: string;
    readonly description?: string;
    readonly parameters: { readonly [key: string]: JsonValue };
  };
}

const isObject = (value: JsonValue | undefined): value is { [key: string]: JsonValue } =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Tool definitions in OpenAI's Chat Completions format (`{ type: "function", function: { name, description,
 * parameters } }`; an empty object schema when none,
 * or no object, is given), the counterpart of `toAnthropicTools`.
 *
 * @example
 * await openai.chat.completions.create({ model, messages: request.toOpenAIChat(), tools: toOpenAITools(tools) });
 */
export function toOpenAITools(tools: readonly NeutralToolDefinition[]): OpenAIFunctionTool[] {
  return tools.map((tool) => ({
    type: "function",
    function: {
      name: tool.name,
      ...(tool.description !== undefined && { description: tool.description }),
      parameters: isObject(tool.inputSchema) ? tool.inputSchema : { type: "object", properties: {} },
    },
  }));
}

/**
 * Provider-neutral tool definitions from OpenAI Chat Completions `tools` (function tools; others are skipped).
 *
 * @example
 * fromOpenAITools(toOpenAITools(tools)); // the same definitions back
 */
export function fromOpenAITools(tools: readonly OpenAIFunctionTool[]): NeutralToolDefinition[] {
  return tools
    .filter((tool) => tool.type === "function")
    .map((tool) => ({
      name: tool.function.name,
      ...(tool.function.description !== undefined && { description: tool.function.description }),
      inputSchema: tool.function.parameters,
    }));
}
