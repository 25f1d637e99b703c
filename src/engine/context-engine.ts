import type { LanguageModel } from "ai";
import type { GovernanceEvent } from "../governance/events.ts";
import { pricingForProvider } from "../governance/cache-economics.ts";
import type { GovernancePipeline } from "../governance/pipeline.ts";
import { preset } from "../governance/presets.ts";
import { randomIds, systemClock, type Clock, type IdGenerator } from "../model/ids.ts";
import type { LoadStrategy, SessionInit, SessionStore } from "../store/session-store.ts";
import type { Summarizer } from "../summarize/summarizer.ts";
import { createExtractiveSummarizer } from "../summarize/extractive-summarizer.ts";
import { createLlmSummarizer } from "../summarize/llm-summarizer.ts";
import { counterForModel } from "../tokens/counter-for-model.ts";
import { reservedOutputTokens } from "../tokens/model-info.ts";
import { defaultModelRegistry } from "../tokens/model-registry.ts";
import type { TokenCounter } from "../tokens/token-counter.ts";
import type { EngineMemory } from "./engine-memory.ts";
import { EngineSession } from "./engine-session.ts";
import { withGovernanceRecord } from "./governance-record.ts";
import type { EngineSettings } from "./engine-settings.ts";

/** Options of `createContextEngine`. */
export interface ContextEngineOptions {
  store: SessionStore;
  /**
   * The primary model: an AI SDK model (used for `/compact` summaries) or a model id. Its window, output limit
   * and tokenizer come from the model registry unless given below.
   */
  model?: LanguageModel;
  contextWindow?: number;
  maxOutputTokens?: number;
  tokenCounter?: TokenCounter;
  /** Automatic compaction summaries. Default: the offline extractive summarizer. */
  summarizer?: Summarizer;
  /**
   * What governs every session: processors and the governor's settings (`preset(name)`, `createPipeline`, or your
   * own). Default: `preset("default")` with the cache prices of `model`'s provider, when known.
   */
  pipeline?: GovernancePipeline;
  memory?: EngineMemory;
  /** Token budget of the core-memories section. Default 1,000. */
  coreMemoryTokens?: number;
  /** How sessions are loaded on restart. Default `full`. */
  restore?: LoadStrategy;
  /**
   * Owner, agent and metadata of sessions this engine creates. With an owner, the engine opens only sessions of
   * that owner or without one (another owner's is `NotFoundError`), and a write to a session whose id another
   * owner took since it was loaded is refused (`ConcurrentWriteError`).
   */
  session?: SessionInit;
  /**
   * Whether the agent can read offloaded outputs back (default true): `run()` offers and runs
   * `recall_tool_output`, and governance's notices tell the agent to call it. False when the engine's requests
   * go to an agent that runs its own tools (a proxy's client): the notices then say to run the tool again.
   */
  recall?: boolean;
  onEvent?: (event: GovernanceEvent, sessionId: string) => void;
  ids?: IdGenerator;
  clock?: Clock;
}

/**
 * The context engine: hands out sessions that govern, persist and assemble every model request.
 *
 * @example
 * ```ts
 * const store = await openSqliteSessionStore({ path: "agent.db" }); // from "ctxkit/sqlite"
 * const model = openai("gpt-4.1");
 * const engine = await createContextEngine({ store, model });
 * const session = engine.session("support-42");
 * await session.addUser("Where is my order?");
 * const request = await session.prepare({ system: "You are a support agent." });
 * const reply = await generateText({ model, ...request.toAiSdk({ model }) }); // with the provider's cache hints
 * await session.recordAssistant({
 *   content: reply.text,
 *   usage: { input: reply.usage.inputTokens ?? 0, output: reply.usage.outputTokens ?? 0 },
 * });
 * await session.commit();
 * ```
 */
export class ContextEngine {
  readonly settings: EngineSettings;
  readonly #sessions = new Map<string, EngineSession>();

  /** @internal Use `createContextEngine`. */
  constructor(settings: EngineSettings) {
    this.settings = settings;
  }

  /** The session with this id (a new id when absent). Lazy: nothing is read or written until it is used. */
  session(id?: string): EngineSession {
    const sessionId = id ?? this.settings.ids("ses");
    let session = this.#sessions.get(sessionId);
    if (!session) {
      session = new EngineSession(sessionId, this.settings);
      this.#sessions.set(sessionId, session);
    }
    return session;
  }

  /** Forgets the in-memory state of a session (the next `session(id)` reloads it from the store). */
  release(id: string): void {
    this.#sessions.delete(id);
  }
}

function modelId(model: LanguageModel | undefined): string | undefined {
  if (model === undefined) return undefined;
  return typeof model === "string" ? model : model.modelId;
}

/** The default pipeline, priced as the model's provider when ctxkit knows its prices. */
function defaultPipeline(provider: string | undefined): GovernancePipeline {
  const pricing = provider === undefined ? undefined : pricingForProvider(provider);
  return preset("default", pricing === undefined ? {} : { pricing });
}

/** Creates a context engine. Resolves the model's window and tokenizer (loading an exact tokenizer if needed). */
export async function createContextEngine(options: ContextEngineOptions): Promise<ContextEngine> {
  const info = defaultModelRegistry.lookup(modelId(options.model) ?? "gpt-4.1");
  const contextWindow = options.contextWindow ?? info.contextWindow;
  const counter = options.tokenCounter ?? (await counterForModel(info));
  const extractive = createExtractiveSummarizer({ counter });
  const summarizer = options.summarizer ?? extractive;
  const compactSummarizer =
    options.model !== undefined && typeof options.model !== "string"
      ? createLlmSummarizer({ model: options.model, fallback: summarizer })
      : summarizer;
  const reserved = reservedOutputTokens({
    contextWindow,
    maxOutputTokens: options.maxOutputTokens ?? info.maxOutputTokens,
  });
  const pipeline =
    options.pipeline ?? defaultPipeline(options.model === undefined ? undefined : info.provider);
  const model = modelId(options.model);
  return new ContextEngine({
    store: options.store,
    contextWindow,
    reservedOutputTokens: reserved,
    counter,
    summarizer,
    compactSummarizer,
    pipeline,
    memory: options.memory,
    coreMemoryTokens: options.coreMemoryTokens ?? 1_000,
    restore: options.restore,
    // Each session records the governance it ran with, so a later replay governs it the same way.
    sessionInit: withGovernanceRecord(options.session, {
      ...(model !== undefined && { model }),
      contextWindow,
      reservedOutputTokens: reserved,
      pipeline,
    }),
    recall: options.recall ?? true,
    onEvent: options.onEvent,
    ids: options.ids ?? randomIds,
    clock: options.clock ?? systemClock,
  });
}
