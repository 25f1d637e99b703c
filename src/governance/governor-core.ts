import type { ContextKind } from "../metrics/context-kind.ts";
import { randomIds, systemClock, type Clock, type IdGenerator } from "../model/ids.ts";
import type { Message } from "../model/message.ts";
import { AppendOnlyOrphanRepair, repairOrphans } from "../conversation/orphan-repair.ts";
import { offloadThresholds } from "./boundaries.ts";
import { AppendOnlyCacheAnchor, rewriteStart } from "./cached-prefix.ts";
import { pipelineSchedule, type PipelineSchedule } from "./checkpoint-triggers.ts";
import type { GovernanceEvent } from "./events.ts";
import type { GovernorOptions } from "./governor-options.ts";
import { governancePricing, type GovernorSettings } from "./governor-settings.ts";
import { initialGovernorLiveState, type GovernorLiveState } from "./governor-state.ts";
import { LoopDetector, type LoopCall, type LoopDetection } from "./loop-detector.ts";
import { MessageTokenCache } from "./message-token-cache.ts";
import { MemoryOffloadStore, type OffloadStore } from "./offload-store.ts";
import { createPipeline, type GovernancePipeline } from "./pipeline.ts";
import { preset } from "./presets.ts";
import { sumTokens, type ProcessorContext, type WindowBudget } from "./processor.ts";
import { longInputTokens } from "./processors/elide-older-tool-inputs.ts";
import { DEFAULT_REUSE_RATES, type ReuseRates } from "./reuse-rates.ts";
import { SessionReuse } from "./session-reuse.ts";
import { UsageAnchor } from "./usage-anchor.ts";
import { ViewFigureCache, type ViewFigures } from "./view-figures.ts";

/**
 * The most an optional check's postponement grows to, when checks keep taking no checkpoint: 8× its base (half a
 * batch; 3 doublings), and never more than 5% of the usable window (small windows, where a late offload soon
 * becomes a compaction, keep checking at the base pace).
 */
const MAX_CHECK_BACKOFF = 8;
const MAX_CHECK_WAIT_SHARE = 0.05;

/**
 * @internal A governor's parts and live state, shared by the modules that each do one part of its work
 * (`Governor` itself, the checkpoint, the overflow fit). Not for use outside the governor.
 */
export class GovernorCore {
  readonly pipeline: GovernancePipeline;
  readonly window: WindowBudget;
  readonly options: GovernorOptions;
  readonly schedule: PipelineSchedule;
  readonly offloadStore: OffloadStore;
  readonly ids: IdGenerator;
  readonly clock: Clock;
  readonly tokens: MessageTokenCache;
  readonly figures: ViewFigureCache;
  /** Everything that changes between requests and is not derived (see `GovernorLiveState`). */
  state: GovernorLiveState = initialGovernorLiveState();
  /** Tokens new in the request being prepared: written to the cache whether or not a checkpoint rewrites. */
  freshTokens = 0;
  /** What this session's agent used again so far, and the reuse rates governance weighs this request. */
  reuse = new SessionReuse();
  reuseRates: ReuseRates;
  /** View messages that are history messages as they came (a snapshot stores only their ids). */
  readonly unchanged = new WeakSet<Message>();

  constructor(options: GovernorOptions) {
    this.options = options;
    // Validated here, whichever door it came through: a hand-made pipeline may carry partial settings.
    this.pipeline = options.pipeline === undefined ? preset("default") : createPipeline(options.pipeline);
    this.schedule = pipelineSchedule(this.pipeline.processors);
    this.tokens = new MessageTokenCache(options.counter);
    this.figures = new ViewFigureCache(this.tokens.tokensOf);
    this.reuseRates = this.learnedRates();
    const reservedOutput =
      options.reservedOutputTokens ??
      Math.min(20_000, options.maxOutputTokens ?? 8_192, Math.floor(options.contextWindow / 4));
    this.window = {
      contextWindow: options.contextWindow,
      reservedOutput,
      usable: Math.max(0, options.contextWindow - reservedOutput),
    };
    this.offloadStore = options.offloadStore ?? new MemoryOffloadStore();
    this.ids = options.ids ?? randomIds;
    this.clock = options.clock ?? systemClock;
  }

  get settings(): GovernorSettings {
    return this.pipeline.settings;
  }

  get tokensOf(): (message: Message) => number {
    return this.tokens.tokensOf;
  }

  /** The view's figures, derived from it. */
  get viewFigures(): ViewFigures {
    return this.figures.of(this.state.view);
  }

  /** The settings' reuse rates (the measured ones for kinds they leave out) blended with this session's counts. */
  learnedRates(): ReuseRates {
    // The counts move only with a reply: most requests (a tool result, a user message) reuse the last fit.
    const fitted = this.#fitted;
    if (fitted?.tracker === this.reuse && fitted.replies === this.reuse.replies) return fitted.rates;
    const rates = this.#fitRates();
    this.#fitted = { tracker: this.reuse, replies: this.reuse.replies, rates };
    return rates;
  }

  #fitted: { tracker: SessionReuse; replies: number; rates: ReuseRates } | undefined;

  #fitRates(): ReuseRates {
    const given = this.settings.reuseRates;
    const prior = Object.fromEntries(
      Object.entries(DEFAULT_REUSE_RATES).map(([kind, rates]) => [
        kind,
        given?.[kind as ContextKind] ?? rates,
      ]),
    ) as unknown as ReuseRates;
    return this.reuse.rates(prior, this.settings.reuseRatesWeight);
  }

  /** A loop detector remembering `recentCalls` (the newest of them its window holds). */
  loopDetector(recentCalls: readonly LoopCall[]): LoopDetector {
    const detector = new LoopDetector({
      repeatThreshold: this.settings.loopRepeatThreshold,
      cycleRepeats: this.settings.loopCycleRepeats,
    });
    detector.restore(recentCalls);
    return detector;
  }

  /** Forgets the view and what was derived from it (the inflation guard and the request count stay). */
  resetView(): void {
    const { requests, emergencyStage, guard, cached, anchor } = this.state;
    Object.assign(this.state, initialGovernorLiveState(), {
      requests,
      emergencyStage,
      guard,
      cached,
      anchor,
    });
    this.reuse = new SessionReuse();
  }

  async ingest(
    fresh: readonly Message[],
    fixed: number,
    publish: (event: GovernanceEvent) => void,
    signal: AbortSignal | undefined,
  ): Promise<LoopDetection | undefined> {
    const loops = this.loopDetector(this.state.recentCalls);
    const context = this.context(fixed, false, publish, signal);
    const { piled, view } = this.state;
    let loop: LoopDetection | undefined;
    try {
      for (const original of fresh) {
        const detection = loops.observe(original);
        if (detection && !loop) {
          loop = detection;
          const { pattern } = detection;
          publish({
            type: "loop-detected",
            pattern,
            tokensBefore: 0,
            tokensAfter: 0,
            messageIds: [original.id],
          });
        }
        await this.tokens.tokensOfAsync(original);
        // The processors that run on each new message (the cap on a single tool result), each on the last's output.
        let arrived: readonly Message[] = [original];
        for (const processor of this.schedule.onMessage) arrived = await processor.process(arrived, context);
        for (const message of arrived) {
          const tokens = await this.tokens.tokensOfAsync(message);
          if (message === original) this.unchanged.add(original);
          view.push(message);
          if (message.role === "tool") piled.toolTokens += tokens;
          piled.inputTokens += longInputTokens(message, this.schedule.inputsAbove);
        }
      }
      return loop;
    } finally {
      this.state.recentCalls = [...loops.recentCalls];
    }
  }

  /**
   * Lets the fold's processors prepare what a later checkpoint will need (`Processor.prepareAhead`) and counts what
   * they made, without stalling the event loop. Only an optimisation: a processor that fails leaves its work to
   * the checkpoint, and the request goes on.
   */
  async prepareAhead(fixed: number, signal: AbortSignal | undefined): Promise<void> {
    if (this.schedule.ahead.length === 0) return;
    const context = this.context(fixed, false, () => {}, signal);
    for (const processor of this.schedule.ahead) {
      if (signal?.aborted) return;
      try {
        // A hand-written processor may return nothing: then there is nothing to count.
        const made: readonly Message[] | undefined = await processor.prepareAhead!(this.state.view, context);
        for (const message of made ?? []) await this.tokens.tokensOfAsync(message);
      } catch {
        // Nothing was changed: the checkpoint makes what this would have.
      }
    }
  }

  /**
   * An optional checkpoint was not taken: consider the next one only after more tool traffic piled up — half a
   * batch, doubled for each optional check in a row that took none (up to `MAX_CHECK_BACKOFF` times and
   * `MAX_CHECK_WAIT_SHARE` of the usable window), so a checkpoint that keeps not paying is not folded again every
   * few requests. A check made while the provider's cache had expired (a free rewrite that still changed nothing)
   * starts the count again; a checkpoint ends it. `dueIn`: requests until a checkpoint that paid but was not yet
   * worth its rewrite would be (`requestsUntilDue`); no optional check comes before then.
   */
  postponeOptionalCheck(dueIn = 0): void {
    const { piled } = this.state;
    if (dueIn > 0) piled.dueAt = this.state.requests + dueIn;
    else delete piled.dueAt;
    const skipped = this.cacheExpired() ? 0 : (piled.skippedChecks ?? 0);
    const base = Math.max(1_000, this.thresholds().minPrunable / 2);
    const longest = Math.min(base * MAX_CHECK_BACKOFF, this.counterWindow().usable * MAX_CHECK_WAIT_SHARE);
    const step = Math.max(base, Math.min(base * 2 ** skipped, longest));
    piled.skippedChecks = skipped + 1;
    piled.nextSettledCheckAt = this.viewFigures.unsettledTokens + step;
    piled.nextCheckAt = piled.toolTokens + piled.inputTokens + step;
  }

  /** Whether the provider's cache expired since the last request (this one writes everything anyway). */
  cacheExpired(): boolean {
    const cached = this.state.cached;
    const ttl = governancePricing(this.settings).ttlMs;
    return (
      this.settings.pricing !== "none" && cached !== undefined && this.clock().getTime() - cached.at > ttl
    );
  }

  /** Makes `next` the view; what piled up restarts from the tool output left outside the protection window. */
  commit(next: readonly Message[]): void {
    this.state.view = [...next];
    let recentTools = 0;
    for (const message of this.state.view)
      if (message.role === "tool" && !isGoverned(message)) recentTools += this.tokensOf(message);
    // Arguments left long now are protected or not worth it; new traffic (counted at ingest) brings them back.
    this.state.piled = {
      toolTokens: Math.min(recentTools, this.thresholds().protect),
      inputTokens: 0,
      nextCheckAt: 0,
      nextSettledCheckAt: 0,
      since: this.state.requests,
    };
  }

  context(
    fixedTokens: number,
    force: boolean,
    emit: (event: GovernanceEvent) => void,
    signal: AbortSignal | undefined,
  ): ProcessorContext {
    const usage = this.usage();
    return {
      settings: this.settings,
      // In the counter's units (see #counterWindow); an offset the counter misses is carried as fixed tokens.
      window: this.counterWindow(),
      fixedTokens: fixedTokens + Math.ceil(usage.offset / usage.scale),
      tokensOf: this.tokensOf,
      summarizer: this.options.summarizer,
      offloadStore: this.offloadStore,
      recall: this.options.recall ?? true,
      ...(this.options.memorySink !== undefined && { memorySink: this.options.memorySink }),
      guard: this.state.guard,
      force,
      requestsSoFar: this.state.requests,
      reuseRates: this.reuseRates,
      rewriteStart: this.rewriteStart,
      freshTokens: this.freshTokens,
      ids: this.ids,
      clock: this.clock,
      ...(signal !== undefined && { signal }),
      emit,
    };
  }

  /** The provider-anchored tokens of a payload of `fixed` tokens plus messages of `messageTokens`. */
  anchored(fixed: number, messageTokens: number): number {
    return this.usage().estimate(fixed + messageTokens);
  }

  /** The provider-usage anchor of the state (see `UsageAnchor`). */
  usage(): UsageAnchor {
    const anchor = new UsageAnchor();
    anchor.restore(this.state.usage);
    return anchor;
  }

  /**
   * What is sent for `view`: the view, orphan-repaired (the view itself when nothing needed repair). The governor's
   * own view only grows between checkpoints: it is repaired from its last step on (`AppendOnlyOrphanRepair`), and
   * the tokens of what changed are counted, not the whole view's.
   */
  sent(view: readonly Message[]): ReturnType<typeof repairOrphans> & { tokens: number } {
    if (view !== this.state.view) {
      const repaired = repairOrphans(view);
      return { ...repaired, tokens: sumTokens(repaired.messages, this.tokensOf) };
    }
    const { kept, ...repaired } = this.#orphans.repair(view);
    const tokens =
      repaired.messages === view
        ? this.viewFigures.tokens
        : this.viewFigures.tokens -
          sumTokens(view.slice(kept), this.tokensOf) +
          sumTokens(repaired.messages.slice(kept), this.tokensOf);
    return { ...repaired, tokens };
  }

  readonly #orphans = new AppendOnlyOrphanRepair();
  /** The cache anchor of the view, searched only in what was appended since the last request. */
  readonly cacheAnchors = new AppendOnlyCacheAnchor();

  /**
   * The window in the local counter's units, as the processors see it: the model's window divided by the anchor's
   * scale. A processor comparing `fixedTokens + sumTokens(view)` with shares of it decides on the anchored figure.
   */
  counterWindow(): WindowBudget {
    const scale = this.usage().scale;
    if (scale === 1) return this.window;
    const contextWindow = Math.floor(this.window.contextWindow / scale);
    const usable = Math.floor(this.window.usable / scale);
    return { contextWindow, reservedOutput: contextWindow - usable, usable };
  }

  /** The protection window and batch (in the counter's units, like the processors' window). */
  thresholds(): ReturnType<typeof offloadThresholds> {
    return offloadThresholds({ settings: this.settings, window: this.counterWindow() });
  }

  rewriteStart = (firstChange: number): number | undefined =>
    rewriteStart(firstChange, this.state.cached, governancePricing(this.settings), this.clock().getTime());
}

function isGoverned(message: Message): boolean {
  return message.content.some((block) => block.type === "tool-result" && block.offloadRef !== undefined);
}
