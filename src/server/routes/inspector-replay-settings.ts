import type { EngineSettings } from "../../engine/engine-settings.ts";
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
  /** `recorded model`: its window and tokenizer (as `ctxkit replay`); `server`: the server's own settings. */
  readonly settingsFrom: "recorded model" | "server";
  readonly contextWindow: number;
  readonly reservedOutputTokens: number;
  readonly counter: TokenCounter;
  /** The extractive summarizer on `counter` (viewing never calls a model). */
  readonly summarizer: Summarizer;
  /** The server's pipeline, priced by `cache`'s provider. */
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
 * The settings a stored session is replayed with by the inspector's timeline and the replay route, so both agree
 * with `ctxkit replay` on the same session: a session that records a model (on its assistant messages) is
 * replayed with that model's window and tokenizer and priced by its provider's cache — unless it is the model
 * this server serves, whose window and counter are the server's own (what governed it). A session that records
 * no model is replayed with the server's settings and priced as the server's model (or its pipeline's pricing).
 *
 * @example
 * const replay = await sessionReplaySettings(messages, engine.settings, context.upstream?.model);
 * await buildTimeline(messages, replay);
 */
export async function sessionReplaySettings(
  messages: readonly Message[],
  settings: EngineSettings,
  serverModel: string | undefined,
): Promise<SessionReplaySettings> {
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
  const cache = model === undefined ? cacheProfiles[pricing ?? "anthropic"] : profileOf(model, pricing);
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
