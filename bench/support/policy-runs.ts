// One policy replayed over one transcript and metered the way providers bill and agents work: every request
// priced by the prompt-cache model of each provider (Anthropic: breakpoints, 5-minute TTL; OpenAI: automatic
// prefixes), summaries billed as LLM calls, and next-step grounding with the re-reads it implies.
import { withSettings } from "../../src/governance/pipeline.ts";
import type { GroundingTotals } from "../../src/metrics/grounding.ts";
import { RetentionTracker } from "../../src/metrics/index.ts";
import type { Message } from "../../src/model/message.ts";
import { cacheProfiles, type CacheProfile } from "../../src/pricing/cache-profile.ts";
import {
  governedReplay,
  recordedFixedTokens,
  recordedReply,
  replyTime,
  requestPoints,
  requestTime,
} from "../../src/replay/replay.ts";
import { ReplayMeter } from "../../src/replay/replay-meter.ts";
import { createExtractiveSummarizer } from "../../src/summarize/index.ts";
import type { Summarizer } from "../../src/summarize/summarizer.ts";
import type { TokenCounter } from "../../src/tokens/token-counter.ts";
import type { BenchPolicy } from "../policies/index.ts";
import { replayWithLangChain } from "../policies/langchain.ts";
import type { CorpusConversation } from "./corpus.ts";

/** The providers every policy is priced for. */
export const PROVIDERS = ["anthropic", "openai"] as const;
export type BenchProvider = (typeof PROVIDERS)[number];

/** What one policy cost and kept on one transcript, priced for one provider. */
export interface PolicyRun {
  /** Input cost with the offline summarizer, which is free (ctxkit: from a replay where it was priced free). */
  readonly asRun: number;
  /** Input cost plus every summary billed as an LLM call. */
  readonly withSummaries: number;
  /** Plus the re-reads of what the agent used next and the view lacked: the headline. */
  readonly withRereads: number;
  readonly inputTokens: number;
  readonly peak: number;
  /** Requests over the window (or refused by ctxkit's pre-flight). */
  readonly overWindow: number;
  readonly compactions: number;
  readonly summaryCalls: number;
  readonly summaryInputTokens: number;
  readonly rereads: number;
  readonly grounding: GroundingTotals;
  /**
   * Strict grounding with every request over the window (or refused by ctxkit's pre-flight) keeping nothing, as
   * the provider would refuse it: the mean over requests whose reply copied something (a refused one always counts).
   */
  readonly inWindowGrounding: number;
  /** Keyword retention (DESIGN.md; secondary). */
  readonly retention: number;
  readonly perRequest: readonly number[];
}

/** Options of `runPolicy`. */
export interface RunOptions {
  readonly window: number;
  /**
   * The window every policy of the comparison shares as room for the recorded system prompt and tools (the table's
   * at a stress window; unbounded at real windows, where every policy carries what the recorded agent sent): they
   * are left out when they would take more than a quarter of it. Default `window`.
   */
  readonly fixedRoom?: number;
  readonly counter: TokenCounter;
  /** Also measure the "as run" cost of ctxkit's policies (a second replay with a free summarizer). */
  readonly asRun: boolean;
}

const RESERVED_OUTPUT = 8_192;

/** The offline summarizer, stating the price an LLM summarizer on the session's model would have. */
function summarizerPricedAs(counter: TokenCounter, profile: CacheProfile | undefined): Summarizer {
  const inner = createExtractiveSummarizer({ counter });
  if (profile === undefined) return inner;
  return {
    name: inner.name,
    price: { input: 1, output: profile.output },
    summarize: (request) => inner.summarize(request),
  };
}

/** Meters for the providers a replay is priced for, fed the same views. */
class Meters {
  readonly #meters: Map<BenchProvider, ReplayMeter>;
  readonly retention = new RetentionTracker();
  readonly perRequest: number[] = [];
  peak = 0;
  overWindow = 0;
  compactions = 0;
  /** Per provider: the sum of per-request strict scores with over-window requests scored 0, and their count. */
  readonly #inWindow = new Map<BenchProvider, { sum: number; scored: number }>();

  constructor(
    providers: readonly BenchProvider[],
    tokensOf: (message: Message) => number,
    breakpoints: "ctxkit" | "newest",
  ) {
    this.#meters = new Map(
      providers.map((provider) => [
        provider,
        new ReplayMeter({ cache: cacheProfiles[provider], tokensOf, breakpoints }),
      ]),
    );
  }

  summary(call: { inputTokens: number; outputTokens: number }): void {
    for (const meter of this.#meters.values()) meter.summary(call);
  }

  request(input: Parameters<ReplayMeter["request"]>[0], tokens: number, window: number): void {
    const over = tokens + RESERVED_OUTPUT > window;
    for (const [provider, meter] of this.#meters) {
      const observed = meter.request(input).grounding;
      if (observed !== undefined && observed.spans > 0)
        this.#scoreInWindow(provider, over ? 0 : observed.kept / observed.spans);
    }
    this.retention.observe(input.history, input.view);
    this.perRequest.push(tokens);
    this.peak = Math.max(this.peak, tokens);
    if (over) this.overWindow++;
  }

  refused(): void {
    this.perRequest.push(0);
    this.overWindow++;
    for (const provider of this.#meters.keys()) this.#scoreInWindow(provider, 0);
  }

  /** The mean of `provider`'s scores with over-window requests at 0 (1 when no reply copied anything). */
  #inWindowMean(provider: BenchProvider): number {
    const totals = this.#inWindow.get(provider);
    return totals === undefined ? 1 : totals.sum / totals.scored;
  }

  #scoreInWindow(provider: BenchProvider, score: number): void {
    const totals = this.#inWindow.get(provider) ?? { sum: 0, scored: 0 };
    totals.sum += score;
    totals.scored++;
    this.#inWindow.set(provider, totals);
  }

  run(provider: BenchProvider, asRun?: number): PolicyRun {
    const meter = this.#meters.get(provider)!;
    const totals = meter.totals;
    return {
      asRun: asRun ?? totals.costUnits,
      withSummaries: totals.costUnits + totals.summarizerCostUnits,
      withRereads: totals.costWithRereads,
      inputTokens: totals.inputTokens,
      peak: this.peak,
      overWindow: this.overWindow,
      compactions: this.compactions,
      summaryCalls: totals.summaryCalls,
      summaryInputTokens: totals.summaryInputTokens,
      rereads: totals.rereads,
      grounding: meter.grounding!.totals,
      inWindowGrounding: this.#inWindowMean(provider),
      retention: this.retention.mean(),
      perRequest: this.perRequest,
    };
  }
}

/**
 * The recorded system prompt and tools every policy's requests carry in the bench: left out (0) when they would take
 * more than a quarter of the usable room the comparison shares (`recordedFixedTokens`), so that at a stress window
 * every policy governs the same history in the same room, whether or not its own counting includes them. The room is
 * the comparison's, not the policy's own window: at real windows a peer sized for 200k must still carry the 53k-token
 * prompt a 1M-window session sent (measured on it per policy window, that peer was billed without it).
 */
function benchFixedTokens(messages: readonly Message[], options: RunOptions): number {
  return recordedFixedTokens(
    messages,
    requestPoints(messages),
    (message) => options.counter.countMessage(message),
    (options.fixedRoom ?? options.window) - RESERVED_OUTPUT,
  );
}

async function governorReplay(
  entry: CorpusConversation,
  policy: Extract<BenchPolicy, { kind: "governor" }>,
  options: RunOptions,
  providers: readonly BenchProvider[],
  ctxkit?: { readonly pricing: CacheProfile; readonly summaries: "llm" | "free" },
): Promise<Meters> {
  const summarizer = summarizerPricedAs(
    options.counter,
    ctxkit?.summaries === "llm" ? ctxkit.pricing : undefined,
  );
  const replay = governedReplay(entry.conversation.messages, {
    contextWindow: options.window,
    // The output room the meter counts a request over the window by (a governor's own default is a quarter of a
    // window below 32,768 tokens: 8,000 at 32k, which the meter would count 192 tokens short).
    reservedOutputTokens: RESERVED_OUTPUT,
    counter: options.counter,
    // The bench compares histories alone at small windows: a system prompt and tools that would take more than a
    // quarter of the usable window are left out, for every policy alike (LangChain's replay below does the same).
    fixedTokens: benchFixedTokens(entry.messages, options),
    summarizer,
    pipeline:
      ctxkit === undefined
        ? policy.pipeline
        : withSettings(policy.pipeline, { pricing: ctxkit.pricing.provider }),
    onSummary: (call) => meters.summary(call),
  });
  const meters = new Meters(providers, replay.governor.tokensOf, policy.breakpoints ?? "ctxkit");
  for await (const step of replay.steps) {
    meters.compactions += step.events.filter((type) => type === "compaction-end").length;
    if (step.view === undefined) {
      meters.refused();
      continue;
    }
    meters.request(
      {
        at: step.at,
        refreshedAt: step.refreshedAt,
        fixed: replay.fixed,
        history: step.history,
        view: step.view,
        reply: step.reply,
        // ctxkit's payloads carry breakpoints on its governor's anchors; a peer's client knows nothing of them.
        ...(policy.ctxkit === true && step.cacheAnchors !== undefined && { anchors: step.cacheAnchors }),
      },
      step.governedTokens,
      options.window,
    );
  }
  return meters;
}

async function langChainReplay(
  entry: CorpusConversation,
  policy: Extract<BenchPolicy, { kind: "langchain" }>,
  options: RunOptions,
): Promise<Meters> {
  const messages = entry.messages;
  const points = requestPoints(messages);
  const tokens = new WeakMap<Message, number>();
  const tokensOf = (message: Message) => {
    let count = tokens.get(message);
    if (count === undefined) {
      count = options.counter.countMessage(message);
      tokens.set(message, count);
    }
    return count;
  };
  const meters = new Meters(PROVIDERS, tokensOf, "ctxkit");
  const fixed = { identity: "recorded system prompt and tools", tokens: benchFixedTokens(messages, options) };
  await replayWithLangChain(messages, {
    contextWindow: options.window,
    counter: options.counter,
    summarizer: createExtractiveSummarizer({ counter: options.counter }),
    trigger: policy.trigger,
    keep: policy.keep,
    onSummary: (call) => meters.summary(call),
    onRequest: (index, view) => {
      const point = points[index]!;
      let total = fixed.tokens;
      for (const message of view) total += tokensOf(message);
      meters.request(
        {
          at: requestTime(messages, point),
          refreshedAt: replyTime(messages, point),
          fixed,
          history: messages.slice(0, point),
          view,
          reply: recordedReply(messages, point),
        },
        total,
        options.window,
      );
    },
  });
  return meters;
}

/**
 * Replays `policy` over one transcript and prices it for every provider. ctxkit's own policies decide by the
 * provider's prices and the summarizer's price, so they are replayed per provider (and, for the "as run" cost,
 * once more with a free summarizer); the peers decide the same way whatever the prices and are replayed once.
 */
export async function runPolicy(
  entry: CorpusConversation,
  policy: BenchPolicy,
  options: RunOptions,
): Promise<Record<BenchProvider, PolicyRun>> {
  if (policy.kind === "langchain") {
    const meters = await langChainReplay(entry, policy, options);
    return { anthropic: meters.run("anthropic"), openai: meters.run("openai") };
  }
  if (policy.ctxkit !== true) {
    const meters = await governorReplay(entry, policy, options, PROVIDERS);
    return { anthropic: meters.run("anthropic"), openai: meters.run("openai") };
  }
  const runs = {} as Record<BenchProvider, PolicyRun>;
  for (const provider of PROVIDERS) {
    const profile = cacheProfiles[provider];
    const priced = await governorReplay(entry, policy, options, [provider], {
      pricing: profile,
      summaries: "llm",
    });
    const free = options.asRun
      ? await governorReplay(entry, policy, options, [provider], { pricing: profile, summaries: "free" })
      : undefined;
    runs[provider] = priced.run(provider, free?.run(provider).asRun);
  }
  return runs;
}
