import { CtxkitError } from "../errors/ctxkit-error.ts";
import type { JsonValue, ToolCallBlock } from "../model/message.ts";
import type { ToolDefinition } from "./prepared-request.ts";

/**
 * A tool the engine runs itself: `session.run()` offers it to the model beside the caller's tools and executes
 * its calls (e.g. `search_memory` when the engine has long-term memory). A failure (bad arguments, nothing
 * found) is thrown with a message the model can act on; `run()` hands it back as an error result.
 */
export interface EngineTool {
  readonly definition: ToolDefinition;
  execute(input: JsonValue, signal?: AbortSignal): Promise<string>;
}

/**
 * Runs one of the engine's own tools for a call of the model; a failure it explains (bad arguments, nothing
 * found) becomes an error result the model can act on.
 */
export async function runEngineTool(
  tool: EngineTool,
  call: ToolCallBlock,
  signal: AbortSignal,
): Promise<{ content: string; isError?: boolean }> {
  try {
    return { content: await tool.execute(call.input, signal) };
  } catch (error) {
    if (!CtxkitError.isInstance(error) || signal.aborted) throw error;
    return { content: error.message, isError: true };
  }
}
