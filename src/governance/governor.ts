import { ContextOverflowError } from "../errors/errors.ts";
import { randomIds, systemClock, type Clock, type IdGenerator } from "../model/ids.ts";
import type { Message } from "../model/message.ts";
import { opensTurn } from "../model/turns.ts";
import { repairOrphans } from "../conversation/orphan-repair.ts";
import type { Summarizer } from "../summarize/summarizer.ts";
import type { TokenCounter } from "../tokens/token-counter.ts";
import { UsageAnchor } from "./usage-anchor.ts";
import { cachePricing, checkpointPays, expectedRemainingRequests } from "./cache-economics.ts";
import { emergencyView } from "./emergency.ts";
import type { GovernanceEvent, GovernanceEventListener } from "./events.ts";
import { LoopDetector, type LoopDetection } from "./loop-detector.ts";
import { MemoryOffloadStore, type OffloadStore } from "./offload-store.ts";
import { isContextOverflowError } from "./overflow-recognition.ts";
import { resolvePolicy, type GovernancePolicy, type GovernancePolicyInput } from "./policy.ts";
import {
  runPipeline,
  sumTokens,
  type CompactionGuard,
  type MemorySink,
  type Processor,
  type ProcessorContext,
  type WindowBudget,
} from "./processor.ts";
import {
  capToolResults,
  compactHistory,
  compressSmallHistory,
  defaultProcessors,
} from "./processors/index.ts";
import { elidableInputTokens } from "./processors/elide-older-tool-inputs.ts";
import { fitNewestStep } from "./processors/truncate-tool-results.ts";
import { budgetExitNotice } from "./budget-exit.ts";
import { offloadThresholds } from "./boundaries.ts";

/** Options of `createGovernor`. */
export interface GovernorOptions {
  /** The model's context window, in tokens. */
  contextWindow: number;
  /** The model's maximum output; the reserve is min(20k, maxOutputTokens, window / 4). Default 8,192. */
  maxOutputTokens?: number;
  /** Overrides the reserved output tokens outright. */
  reservedOutputTokens?: number;
  counter: TokenCounter;
  summarizer: Summarizer;
  policy?: GovernancePolicy | GovernancePolicyInput;
  /** The pipeline run at checkpoints. Default: `defaultProcessors()`. */
  processors?: readonly Processor[];
  /** Where offloaded and truncated outputs are kept. Default: in memory. */
  offloadStore?: OffloadStore;
  memorySink?: MemorySink;
  onEvent?: GovernanceEventListener;
  ids?: IdGenerator;
  clock?: Clock;
}

/** Per-request options of `prepare`. */
export interface PrepareOptions {
  /** Tokens of the payload outside the messages (system prompt, tool definitions). */
  fixedTokens?: number;
  signal?: AbortSignal;
}

/** Token figures of a prepared request. */
export interface RequestTokens extends WindowBudget {
  readonly fixed: number;
  readonly messages: number;
  /** `fixed + messages`: what the payload is expected to cost, by the local counter. */
  readonly total: number;
  /**
   * The total anchored on the provider's last reported usage (its count of the previous request plus the
   * estimated change since); present once a usage was observed. Governance decisions use it when present.
   */
  readonly anchoredTotal?: number;
}

/** The outcome of `prepare`: the governed messages to send, and what governance did. */
export interface GovernedRequest {
  /** The view to send, in order (orphan-repaired; may end with a budget notice). */
  readonly messages: readonly Message[];
  readonly events: readonly GovernanceEvent[];
  readonly tokens: RequestTokens;
  /** True when this request rewrote earlier history (the prompt cache restarts after the first change). */
  readonly checkpoint: boolean;
  readonly loop?: LoopDetection;
}

/** What `recover` did after a provider overflow error. */
export interface RecoveryOutcome {
  /** Whether the caller should prepare and send the request again. */
  readonly retry: boolean;
  /** True when the context had to be cleared (only the current instruction remains). */
  readonly cleared: boolean;
}

/**
 * Governs one session's history, request after request. Between checkpoints the view only grows at its end,
 * so request N+1 starts with request N's messages byte for byte (prompt-cache hits); a checkpoint (compaction,
 * or a truncation/offload batch that pays for its cache rewrite) rewrites older history. Per-request work is
 * proportional to what is new: messages are counted once and the view is kept between requests.
 *
 * @example
 * ```ts
 * const governor = createGovernor({ contextWindow: 200_000, counter, summarizer });
 * const request = await governor.prepare(conversation.snapshot().messages, { fixedTokens: 3_000 });
 * const reply = await callModel(request.messages);
 * ```
 */
export class Governor {
  readonly policy: GovernancePolicy;
  readonly window: WindowBudget;
  readonly #options: GovernorOptions;
  readonly #processors: readonly Processor[];
  readonly #offloadStore: OffloadStore;
  readonly #ids: IdGenerator;
  readonly #clock: Clock;
  readonly #tokenCache = new WeakMap<Message, number>();
  readonly #usageAnchor = new UsageAnchor();
  readonly #guard: CompactionGuard = {};
  #loops: LoopDetector;
  #view: Message[] = [];
  #viewTokens = 0;
  #covered = 0;
  #lastCoveredId: string | undefined;
  #turnsInView = 0;
  #ungovernedToolTokens = 0;
  #elidableInputTokens = 0;
  #nextOptionalCheckAt = 0;
  /** Tokens of the view after its newest summary: what a settled-history compaction could summarise. */
  #unsettledTokens = 0;
  #nextSettledCheckAt = 0;
  #requests = 0;
  #emergencyStage = 0;
  #tokenizerCalls = 0;

  constructor(options: GovernorOptions) {
    this.#options = options;
    this.policy = resolvePolicy(options.policy ?? {});
    const reservedOutput =
      options.reservedOutputTokens ??
      Math.min(20_000, options.maxOutputTokens ?? 8_192, Math.floor(options.contextWindow / 4));
    this.window = {
      contextWindow: options.contextWindow,
      reservedOutput,
      usable: Math.max(0, options.contextWindow - reservedOutput),
    };
    this.#processors = options.processors ?? defaultProcessors();
    this.#offloadStore = options.offloadStore ?? new MemoryOffloadStore();
    this.#ids = options.ids ?? randomIds;
    this.#clock = options.clock ?? systemClock;
    this.#loops = this.#newLoopDetector();
  }

  /** How many times the token counter ran (each message is counted once). */
  get tokenizerCalls(): number {
    return this.#tokenizerCalls;
  }

  /** The governed view as of the last request (without notices or orphan repair). */
  get view(): readonly Message[] {
    return this.#view;
  }

  /** The store holding offloaded outputs (for `recall_tool_output`). */
  get offloadStore(): OffloadStore {
    return this.#offloadStore;
  }

  /** Tokens of one message, counted once and cached. */
  tokensOf = (message: Message): number => {
    const counter = this.#options.counter;
    if (message.tokens !== undefined && message.tokenizer === counter.name) return message.tokens;
    const cached = this.#tokenCache.get(message);
    if (cached !== undefined) return cached;
    this.#tokenizerCalls++;
    const count = counter.countMessage(message);
    this.#tokenCache.set(message, count);
    return count;
  };

  /** `tokensOf`, counted without stalling the event loop (new messages can be huge: one request's body). */
  async #tokensOfAsync(message: Message): Promise<number> {
    const counter = this.#options.counter;
    const known =
      (message.tokens !== undefined && message.tokenizer === counter.name) || this.#tokenCache.has(message);
    if (!known && counter.countMessageAsync !== undefined) {
      this.#tokenizerCalls++;
      this.#tokenCache.set(message, await counter.countMessageAsync(message));
    }
    return this.tokensOf(message);
  }

  /**
   * Governs the history for the next model request. `history` is the session's full history (the same list
   * growing at its end between calls; any other change is detected and rebuilds the view).
   */
  async prepare(history: readonly Message[], options: PrepareOptions = {}): Promise<GovernedRequest> {
    this.#requests++;
    const events: GovernanceEvent[] = [];
    const publish = (event: GovernanceEvent) => {
      events.push(event);
      this.#options.onEvent?.(event);
    };
    const continues =
      history.length >= this.#covered &&
      (this.#covered === 0 || history[this.#covered - 1]?.id === this.#lastCoveredId);
    const rebuilt = !continues;
    if (rebuilt) this.#resetView();
    const fresh = history.slice(this.#covered);
    this.#covered = history.length;
    this.#lastCoveredId = history.at(-1)?.id;
    const counted = options.fixedTokens ?? 0;
    const loop = await this.#ingest(fresh, counted, publish, options.signal);
    // Decisions use the provider-anchored total: what the local counter misses (hidden framing, a different
    // tokenizer) is carried as if it were part of the fixed tokens.
    const fixed = counted + this.#anchorCorrection(counted + this.#viewTokens);

    const { policy, window } = this;
    const total = fixed + this.#viewTokens;
    const overflow = total + window.reservedOutput > window.contextWindow;
    const mustCompact = policy.compactionTrigger > 0 && total > policy.compactionTrigger * window.usable;
    const turnsOver = policy.maxTurns > 0 && this.#turnsInView > policy.maxTurns;
    const mandatory = overflow || mustCompact || turnsOver || (rebuilt && history.length > 0);
    let checkpoint = false;
    if (mandatory || this.#optionalCandidate()) {
      checkpoint = await this.#checkpoint(fixed, mandatory, publish, options.signal);
    }

    let messages: readonly Message[] = this.#view;
    const sent = fixed + this.#viewTokens;
    if (policy.budgetExitShare > 0 && sent > policy.budgetExitShare * window.usable) {
      const notice = budgetExitNotice(this.#view, sent, window, this.#ids, this.#clock);
      if (notice && sent + this.tokensOf(notice) + window.reservedOutput <= window.contextWindow) {
        messages = [...messages, notice];
        publish({
          type: "budget-exit-notice",
          tokensBefore: sent,
          tokensAfter: sent + this.tokensOf(notice),
          messageIds: [],
        });
      }
    }
    const repaired = repairOrphans(messages);
    if (repaired.messages !== messages) {
      publish({
        type: "orphans-repaired",
        synthesized: repaired.report.synthesized.length,
        dropped: repaired.report.dropped.length,
        tokensBefore: sumTokens(messages, this.tokensOf),
        tokensAfter: sumTokens(repaired.messages, this.tokensOf),
        messageIds: [],
      });
    }
    const messageTokens =
      repaired.messages === this.#view ? this.#viewTokens : sumTokens(repaired.messages, this.tokensOf);
    const counterTotal = counted + messageTokens;
    return {
      messages: repaired.messages === this.#view ? [...this.#view] : repaired.messages,
      events,
      tokens: {
        ...window,
        fixed: counted,
        messages: messageTokens,
        total: counterTotal,
        ...(this.#usageAnchor.reported !== undefined && {
          anchoredTotal: counterTotal + this.#anchorCorrection(counterTotal),
        }),
      },
      checkpoint,
      ...(loop !== undefined && { loop }),
    };
  }

  /**
   * Call after a provider rejected a request as too long (any provider's error shape). First time: the whole
   * view is summarised to the memory sink and trimmed aggressively (10k-character caps, last 5 turns) — retry.
   * Second time in a row: the context is cleared down to the current instruction, and the caller is told.
   */
  async recover(error: unknown, signal?: AbortSignal): Promise<RecoveryOutcome> {
    if (!isContextOverflowError(error)) return { retry: false, cleared: false };
    const before = this.#viewTokens;
    const stage = this.#emergencyStage === 0 ? "trimmed" : "cleared";
    const context = this.#context(0, true, () => undefined, signal);
    const { view, removedIds } = await emergencyView(this.#view, stage, context);
    this.#commit(view);
    this.#emergencyStage++;
    this.#options.onEvent?.({
      type: "emergency-recovery",
      stage,
      tokensBefore: before,
      tokensAfter: this.#viewTokens,
      messageIds: removedIds,
    });
    return { retry: stage === "trimmed", cleared: stage === "cleared" };
  }

  /**
   * User-initiated compaction (`/compact [focus]`): summarises the middle of the current view now, whatever the
   * thresholds say, optionally focused. Resolves with the events; the view is rewritten only when it shrank.
   */
  async compact(
    options: { focus?: string; fixedTokens?: number; signal?: AbortSignal; summarizer?: Summarizer } = {},
  ): Promise<GovernanceEvent[]> {
    const events: GovernanceEvent[] = [];
    const context = {
      ...this.#context(
        options.fixedTokens ?? 0,
        false,
        (event: GovernanceEvent) => events.push(event),
        options.signal,
      ),
      ...(options.summarizer !== undefined && { summarizer: options.summarizer }),
      manual: options.focus === undefined ? {} : { focus: options.focus },
    };
    const next = await compactHistory.process(this.#view, context);
    if (next !== this.#view) this.#commit(next);
    for (const event of events) this.#options.onEvent?.(event);
    return events;
  }

  /**
   * Call with the provider's reported prompt tokens (`usage.input`, cached ones included) of a request this
   * governor prepared: later decisions are anchored on that truth, and only the change since is estimated.
   */
  observeUsage(prepared: RequestTokens, reportedInputTokens: number): void {
    this.#usageAnchor.observe(prepared.total, reportedInputTokens);
  }

  /** What to add to a locally counted total to anchor it on the last reported usage (at most 10% less). */
  #anchorCorrection(countedTotal: number): number {
    const anchored = this.#usageAnchor.estimate(countedTotal);
    return Math.max(anchored - countedTotal, -Math.floor(countedTotal / 10));
  }

  /** Call after a successful model response: ends an emergency sequence. */
  recordSuccess(): void {
    this.#emergencyStage = 0;
  }

  #newLoopDetector(): LoopDetector {
    return new LoopDetector({
      repeatThreshold: this.policy.loopRepeatThreshold,
      cycleRepeats: this.policy.loopCycleRepeats,
    });
  }

  #resetView(): void {
    this.#usageAnchor.reset();
    this.#view = [];
    this.#viewTokens = 0;
    this.#covered = 0;
    this.#turnsInView = 0;
    this.#ungovernedToolTokens = 0;
    this.#elidableInputTokens = 0;
    this.#nextOptionalCheckAt = 0;
    this.#unsettledTokens = 0;
    this.#nextSettledCheckAt = 0;
    this.#loops = this.#newLoopDetector();
  }

  async #ingest(
    fresh: readonly Message[],
    fixed: number,
    publish: (event: GovernanceEvent) => void,
    signal: AbortSignal | undefined,
  ): Promise<LoopDetection | undefined> {
    let loop: LoopDetection | undefined;
    const capContext = this.#context(fixed, false, publish, signal);
    for (const original of fresh) {
      const detection = this.#loops.observe(original);
      if (detection && !loop) {
        loop = detection;
        publish({
          type: "loop-detected",
          pattern: detection.pattern,
          tokensBefore: 0,
          tokensAfter: 0,
          messageIds: [original.id],
        });
      }
      await this.#tokensOfAsync(original);
      const [message] =
        original.role === "tool" ? await capToolResults.process([original], capContext) : [original];
      const tokens = await this.#tokensOfAsync(message!);
      this.#view.push(message!);
      this.#viewTokens += tokens;
      this.#unsettledTokens += tokens;
      if (message!.role === "tool") this.#ungovernedToolTokens += tokens;
      this.#elidableInputTokens += elidableInputTokens(message!, this);
      if (opensTurn(message!)) this.#turnsInView++;
    }
    return loop;
  }

  /**
   * Whether to consider an optional checkpoint: enough history came since the newest summary to summarise some of
   * it, or enough tool output piled up outside the protection window for a batch.
   */
  #optionalCandidate(): boolean {
    const { policy } = this;
    const { protect, minPrunable } = offloadThresholds(this);
    const settledReady =
      policy.compactSettledHistory &&
      policy.compactionTrigger > 0 &&
      this.#unsettledTokens >= this.#nextSettledCheckAt &&
      this.#unsettledTokens >= protect + minPrunable;
    if (settledReady) return true;
    const piled = this.#ungovernedToolTokens + this.#elidableInputTokens;
    if (piled < this.#nextOptionalCheckAt) return false;
    const prunable = piled - protect;
    const offloadReady = policy.offloadMinPrunableTokens > 0 && prunable >= minPrunable;
    const truncateReady = policy.truncateToolResultsAbove > 0 && prunable >= policy.truncateToolResultsAbove;
    return offloadReady || truncateReady;
  }

  async #checkpoint(
    fixed: number,
    mandatory: boolean,
    publish: (event: GovernanceEvent) => void,
    signal: AbortSignal | undefined,
  ): Promise<boolean> {
    const pending: GovernanceEvent[] = [];
    const context = this.#context(fixed, false, (event) => pending.push(event), signal);
    let next = await runPipeline(this.#processors, this.#view, context);
    let nextTokens = sumTokens(next, this.tokensOf);
    if (!mandatory && this.policy.cacheAware && next !== this.#view) {
      const firstChange = next.findIndex((message, index) => message !== this.#view[index]);
      const rewritten = sumTokens(next.slice(firstChange < 0 ? next.length : firstChange), this.tokensOf);
      const pays = checkpointPays(
        {
          savedTokens: this.#viewTokens - nextTokens,
          rewrittenTokens: rewritten,
          remainingRequests: expectedRemainingRequests(this.#requests),
        },
        cachePricing[this.policy.pricing],
      );
      if (!pays) {
        this.#postponeOptionalCheck();
        publish({
          type: "checkpoint-skipped",
          reason:
            "rewriting the cached prefix would cost more than it saves over the expected remaining requests",
          tokensBefore: fixed + this.#viewTokens,
          tokensAfter: fixed + nextTokens,
          messageIds: [],
        });
        return false;
      }
    }
    const { window } = this;
    if (this.policy.preflight && fixed + nextTokens + window.reservedOutput > window.contextWindow) {
      const forced = this.#context(fixed, true, (event) => pending.push(event), signal);
      next = await runPipeline([compactHistory, compressSmallHistory], next, forced);
      nextTokens = sumTokens(next, this.tokensOf);
      if (fixed + nextTokens + window.reservedOutput > window.contextWindow) {
        next = await fitNewestStep(next, window.contextWindow - window.reservedOutput - fixed, forced);
        nextTokens = sumTokens(next, this.tokensOf);
      }
      const required = fixed + nextTokens + window.reservedOutput;
      if (required > window.contextWindow) {
        for (const event of pending) publish(event);
        this.#commit(next);
        throw new ContextOverflowError(
          {
            requiredTokens: required,
            windowTokens: window.contextWindow,
            reservedOutputTokens: window.reservedOutput,
          },
          "governance could not shrink the protected part (current instruction and newest step) enough",
        );
      }
      pending.push({
        type: "overflow-prevented",
        windowTokens: window.contextWindow,
        tokensBefore: fixed + this.#viewTokens,
        tokensAfter: fixed + nextTokens,
        messageIds: [],
      });
    }
    for (const event of pending) publish(event);
    if (next === this.#view) {
      // Nothing was worth doing: without this, every request would re-run the pipeline over the whole view.
      if (!mandatory) this.#postponeOptionalCheck();
      return false;
    }
    this.#commit(next);
    return true;
  }

  /** An optional checkpoint was not taken: consider the next one only after more tool traffic piled up. */
  #postponeOptionalCheck(): void {
    const step = Math.max(1_000, offloadThresholds(this).minPrunable / 2);
    this.#nextSettledCheckAt = this.#unsettledTokens + step;
    this.#nextOptionalCheckAt = this.#ungovernedToolTokens + this.#elidableInputTokens + step;
  }

  #commit(next: readonly Message[]): void {
    this.#view = [...next];
    this.#viewTokens = sumTokens(this.#view, this.tokensOf);
    this.#turnsInView = this.#view.filter(opensTurn).length;
    const { protect } = offloadThresholds(this);
    let recentTools = 0;
    for (const message of this.#view)
      if (message.role === "tool" && !isGoverned(message)) recentTools += this.tokensOf(message);
    this.#ungovernedToolTokens = Math.min(recentTools, protect);
    // Arguments left long now are protected or not worth it; new traffic (counted at ingest) brings them back.
    this.#elidableInputTokens = 0;
    this.#nextOptionalCheckAt = 0;
    const lastSummary = this.#view.findLastIndex((message) => message.kind === "summary");
    this.#unsettledTokens = sumTokens(this.#view.slice(lastSummary + 1), this.tokensOf);
    this.#nextSettledCheckAt = 0;
  }

  #context(
    fixedTokens: number,
    force: boolean,
    emit: (event: GovernanceEvent) => void,
    signal: AbortSignal | undefined,
  ): ProcessorContext {
    return {
      policy: this.policy,
      window: this.window,
      fixedTokens,
      tokensOf: this.tokensOf,
      summarizer: this.#options.summarizer,
      offloadStore: this.#offloadStore,
      ...(this.#options.memorySink !== undefined && { memorySink: this.#options.memorySink }),
      guard: this.#guard,
      force,
      requestsSoFar: this.#requests,
      ids: this.#ids,
      clock: this.#clock,
      ...(signal !== undefined && { signal }),
      emit,
    };
  }
}

function isGoverned(message: Message): boolean {
  return message.content.some((block) => block.type === "tool-result" && block.offloadRef !== undefined);
}

/**
 * Creates a governor for one session.
 *
 * @example
 * const governor = createGovernor({ contextWindow: 128_000, counter, summarizer, policy: preset("aggressive") });
 */
export function createGovernor(options: GovernorOptions): Governor {
  return new Governor(options);
}
