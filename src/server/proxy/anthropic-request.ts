import { z } from "zod";
import type { ToolDefinition } from "../../engine/prepared-request.ts";
import type { JsonValue } from "../../model/message.ts";

/**
 * The fields of an Anthropic Messages request the proxy reads; every other field (`thinking`, `metadata`,
 * `context_management`, `tool_choice`, …) is forwarded untouched. The messages themselves are checked when they
 * are converted.
 */
export const anthropicRequestSchema = z.looseObject({
  model: z.string().min(1, "name a model"),
  messages: z.array(z.unknown()).min(1, "send at least one message"),
  system: z.union([z.string(), z.array(z.looseObject({ type: z.string(), text: z.string() }))]).optional(),
  tools: z.array(z.looseObject({ name: z.string().min(1) })).optional(),
  stream: z.boolean().optional(),
});

/** A parsed Anthropic Messages request. */
export type AnthropicRequest = z.output<typeof anthropicRequestSchema>;

/** The API version sent upstream when the client names none. */
export const DEFAULT_ANTHROPIC_VERSION = "2023-06-01";

/**
 * The request's tools as ctxkit tool definitions, so they count against the window. Server tools (web search,
 * code execution: a `type` and no `input_schema`) are forwarded but count by their name only.
 *
 * @example
 * anthropicToolDefinitions([{ name: "Read", input_schema: { type: "object" } }]);
 */
export function anthropicToolDefinitions(tools: AnthropicRequest["tools"]): ToolDefinition[] {
  return (tools ?? []).map((tool) => ({
    name: tool.name,
    ...(typeof tool["description"] === "string" && { description: tool["description"] }),
    ...(tool["input_schema"] !== undefined && { inputSchema: tool["input_schema"] as JsonValue }),
  }));
}

/**
 * The Anthropic headers of a client request that go upstream: `anthropic-version` (the default when absent) and
 * `anthropic-beta`, which turns on the features the client's body uses.
 *
 * @example
 * anthropicHeaders((name) => c.req.header(name)); // { "anthropic-version": "2023-06-01" }
 */
export function anthropicHeaders(header: (name: string) => string | undefined): Record<string, string> {
  const beta = header("anthropic-beta");
  return {
    "anthropic-version": header("anthropic-version") ?? DEFAULT_ANTHROPIC_VERSION,
    ...(beta !== undefined && { "anthropic-beta": beta }),
  };
}
