import type { EngineSettings } from "../../engine/engine-settings.ts";
import type { GovernanceRecord } from "../../engine/governance-record.ts";
import { withSettings, type GovernancePipeline } from "../../governance/pipeline.ts";
import type { Message } from "../../model/message.ts";
import { cacheProfileFor, cacheProfiles, type CacheProfile } from "../../pricing/cache-profile.ts";
import { createExtractiveSummarizer } from "../../summarize/index.ts";
import type { Summarizer } from "../../summarize/summarizer.ts";
import { counterForModel } from "../../tokens/counter-for-model.ts";
import { reservedOutputTokens } from "../../tokens/model-info.ts";
import { defaultModelRegistry } from "../../tokens/model-registry.ts";
import type { TokenCounter } from "../../tokens/token-counter.ts";

/** How a stored session is replayed: window, tokenizer, pipeline and the cache model that bills it. */
export interface SessionReplaySettings {
  /** The model the session is replayed as, when known. */
  readonly model?: string;
  /**
   * `session`: the governance the session recorded it ran with (window, model, pipeline); `recorded model`: the
   * window and tokenizer of the model its replies name (as `ctxkit replay` of a transcript); `server`: the
   * server's own settings.
   */
  readonly settingsFrom: "session" | "recorded model" | "server";
  readonly contextWindow: number;
  readonly reservedOutputTokens: number;
  readonly counter: TokenCounter;
  /** The extractive summarizer on `counter` (viewing never calls a model). */
  readonly summarizer: Summarizer;
  /** The pipeline it is governed by, priced by `cache`'s provider. */
  readonly pipeline: GovernancePipeline;
  readonly cache: CacheProfile;
}

/** The provider's cache profile of a model (Google's models bill by Gemini's cache). */
function profileOf(model: string, provider?: CacheProfile["provider"]): CacheProfile {
  if (provider !== undefined) return cacheProfileFor(model, { provider });
  const known = defaultModelRegistry.lookup(model).provider === "google";
  return cacheProfileFor(model, known ? { provider: "gemini" } : {});
}

/**
 * The settings a stored session is replayed with, when it recorded the governance it ran with: that window,
 * reserve and pipeline, and the tokenizer and cache of its model (the replies' model when the engine had none).
 */
async function recordedSettings(
  messages: readonly Message[],
  record: GovernanceRecord,
): Promise<SessionReplaySettings> {
  const recorded = messages.find(
    (message) => message.role === "assistant" && message.model !== undefined,
  )?.model;
  const model = record.model ?? recorded;
  const pricing = record.pipeline.settings.pricing;
  const cache = model === undefined ? cacheProfiles[pricing] : profileOf(model, pricing);
  const counter = await counterForModel(defaultModelRegistry.lookup(model ?? "gpt-4.1"));
  return {
    ...(model !== undefined && { model }),
    settingsFrom: "session",
    contextWindow: record.contextWindow,
    reservedOutputTokens: record.reservedOutputTokens,
    counter,
    summarizer: createExtractiveSummarizer({ counter }),
    pipeline: withSettings(record.pipeline, { pricing: cache.provider }),
    cache,
  };
}

/**
 * The settings a stored session is replayed with by the inspector's timeline and the replay route, so both agree
 * with `ctxkit replay` on the same session: a session that records a model (on its assistant messages) is
 * replayed with that model's window and tokenizer and priced by its provider's cache — unless it is the model
 * this server serves, whose window and counter are the server's own (what governed it). A session that records
 * no model is replayed with the server's settings and priced as the server's model (or its pipeline's pricing).
 * A session that recorded the governance it ran with (`record`, from its metadata) is replayed with that.
 *
 * @example
 * const replay = await sessionReplaySettings(messages, engine.settings, context.upstream?.model, record);
 * await buildTimeline(messages, replay);
 */
export async function sessionReplaySettings(
  messages: readonly Message[],
  settings: Pick<EngineSettings, "contextWindow" | "reservedOutputTokens" | "counter" | "pipeline">,
  serverModel: string | undefined,
  record?: GovernanceRecord,
): Promise<SessionReplaySettings> {
  if (record !== undefined) return recordedSettings(messages, record);
  const recorded = messages.find(
    (message) => message.role === "assistant" && message.model !== undefined,
  )?.model;
  if (recorded !== undefined && recorded !== serverModel) {
    const info = defaultModelRegistry.lookup(recorded);
    const counter = await counterForModel(info);
    const cache = profileOf(recorded);
    return {
      model: recorded,
      settingsFrom: "recorded model",
      contextWindow: info.contextWindow,
      reservedOutputTokens: reservedOutputTokens(info),
      counter,
      summarizer: createExtractiveSummarizer({ counter }),
      pipeline: withSettings(settings.pipeline, { pricing: cache.provider }),
      cache,
    };
  }
  const model = recorded ?? serverModel;
  const pricing = settings.pipeline.settings.pricing;
  const cache = model === undefined ? cacheProfiles[pricing] : profileOf(model, pricing);
  return {
    ...(model !== undefined && { model }),
    settingsFrom: "server",
    contextWindow: settings.contextWindow,
    reservedOutputTokens: settings.reservedOutputTokens,
    counter: settings.counter,
    summarizer: createExtractiveSummarizer({ counter: settings.counter }),
    pipeline: withSettings(settings.pipeline, { pricing: cache.provider }),
    cache,
  };
}
