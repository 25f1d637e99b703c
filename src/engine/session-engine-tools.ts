import { createRecallTool } from "../governance/recall-tool.ts";
import { sessionOffloadStore } from "../store/blob-store.ts";
import type { EngineSettings } from "./engine-settings.ts";
import type { EngineTool } from "./engine-tool.ts";

/**
 * The tools a session's engine answers itself: `recall_tool_output` when the engine recalls (`recall`) and its
 * governance may move tool outputs or arguments out of the view (its notices then tell the model to call it), and
 * `search_memory` when the engine has long-term memory.
 */
export function sessionEngineTools(settings: EngineSettings, sessionId: string): readonly EngineTool[] {
  const tools: EngineTool[] = [];
  if (settings.recall && offloads(settings)) {
    const recall = createRecallTool(sessionOffloadStore(settings.store.blobs, sessionId));
    tools.push({ definition: recall.definition, execute: (input) => recall.execute(input) });
  }
  const search = settings.memory?.searchTool;
  if (search !== undefined) tools.push(search);
  return tools;
}

/** True when a processor of the engine's pipeline may move tool outputs or arguments out of the view. */
function offloads(settings: EngineSettings): boolean {
  return settings.pipeline.processors.some((processor) => processor.offloads === true);
}
