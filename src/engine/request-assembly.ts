import {
  assembleSystemPrompt,
  iterationBudgetSection,
  type PromptSection,
} from "../assembly/system-prompt.ts";
import { assemblePayload } from "../assembly/payload.ts";
import { inspectPayload } from "../assembly/inspect.ts";
import type { Conversation } from "../conversation/conversation.ts";
import { remapAnchors } from "../governance/anchor-remap.ts";
import { Governor } from "../governance/governor.ts";
import { MemoryOffloadStore } from "../governance/offload-store.ts";
import { randomIds } from "../model/ids.ts";
import { sessionOffloadStore } from "../store/blob-store.ts";
import { inlineMedia } from "../store/media-blobs.ts";
import { createExtractiveSummarizer } from "../summarize/index.ts";
import type { EngineSettings } from "./engine-settings.ts";
import type { PrepareRequestOptions } from "./engine-session.ts";
import { PreparedRequest } from "./prepared-request.ts";
import { governorOptions } from "./session-load.ts";

/**
 * Governs and assembles a session's next request with `governor`: fresh system prompt (with core memories when
 * the engine has memory), governed history, current input last. Resolves with it and the tokens of its fixed
 * part (system prompt and tool definitions).
 */
export async function assembleRequest(
  sessionId: string,
  settings: EngineSettings,
  governor: Governor,
  conversation: Conversation,
  options: PrepareRequestOptions,
): Promise<{ prepared: PreparedRequest; fixedTokens: number }> {
  const sections: PromptSection[] =
    typeof options.system === "string"
      ? [{ name: "identity", content: options.system }]
      : [...(options.system ?? [])];
  if (options.maxSteps !== undefined) sections.push(iterationBudgetSection(options.maxSteps));
  if (settings.memory !== undefined && !sections.some((section) => section.name === "core-memories")) {
    const budget = settings.coreMemoryTokens;
    const memories = await settings.memory.coreMemories(sessionId, budget);
    sections.push({ name: "core-memories", content: memories, maxTokens: budget });
  }
  const system = assembleSystemPrompt(sections, settings.counter);
  const tools = options.tools ?? [];
  const fixedTokens =
    system.tokens +
    (tools.length > 0 ? settings.counter.countText(JSON.stringify(tools)) : 0) +
    (options.fixedTokens ?? 0);
  const governed = await governor.prepare(conversation.snapshot(), {
    fixedTokens,
    ...(options.signal !== undefined && { signal: options.signal }),
  });
  const assembled = assemblePayload(system, governed.messages);
  const payload =
    options.media === "ref"
      ? assembled
      : { ...assembled, messages: await inlineMedia(assembled.messages, settings.store.blobs) };
  const prepared = new PreparedRequest({
    sessionId,
    payload,
    tools,
    tokens: governed.tokens,
    events: governed.events,
    inspection: inspectPayload(assembled, system.sections, governor.tokensOf, governed.events),
    checkpoint: governed.checkpoint,
    loop: governed.loop,
    // Positions in the governed view; the payload leaves out its system messages.
    ...(governed.cacheAnchors !== undefined && {
      cacheAnchors: remapAnchors(governed.cacheAnchors, governed.messages, payload.messages),
    }),
  });
  return { prepared, fixedTokens };
}

/**
 * A copy of a session's governor that changes nothing of the session: its own ids, the extractive summarizer (a
 * look never calls a model), reads of the session's offloads, and what it offloads kept in memory.
 */
export function previewGovernor(
  sessionId: string,
  settings: EngineSettings,
  governor: Governor,
  conversation: Conversation,
): Governor {
  const sessionOffloads = sessionOffloadStore(settings.store.blobs, sessionId);
  const offloads = new MemoryOffloadStore();
  const copy = new Governor({
    ...governorOptions(settings),
    summarizer: createExtractiveSummarizer({ counter: settings.counter }),
    // Its own ids: taking the session's would change the ids of what the session writes next.
    ids: randomIds,
    offloadStore: {
      putText: (content) => offloads.putText(content),
      getText: async (ref, range) =>
        (await offloads.getText(ref, range)) ?? sessionOffloads.getText(ref, range),
      refFor: (content) => offloads.refFor(content),
    },
  });
  copy.restore(governor.snapshot(), conversation.snapshot().messages);
  return copy;
}
