import type { JsonValue } from "../../../model/message.ts";
import type { AnthropicTool } from "./anthropic-message.ts";

/** A provider-neutral tool definition: name, description and JSON-schema input. */
export interface NeutralToolDefinition {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema?: JsonValue;
}

/**
 * Tool definitions in Anthropic's format (`input_schema`; an object schema when none is given, since Anthropic
 * requires one).
 *
 * @example
 * toAnthropicTools([{ name: "ls", inputSchema: { type: "object" } }]); // [{ name: "ls", input_schema: { type: "object" } }]
 */
export function toAnthropicTools(tools: readonly NeutralToolDefinition[]): AnthropicTool[] {
  return tools.map((tool) => ({
    name: tool.name,
    ...(tool.description !== undefined && { description: tool.description }),
    input_schema: tool.inputSchema ?? { type: "object" },
  }));
}
