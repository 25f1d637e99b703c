import type { JsonValue } from "../model/message.ts";
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
