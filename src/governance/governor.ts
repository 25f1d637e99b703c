import { ContextOverflowError, ValidationError } from "../errors/errors.ts";
import { DEFAULT_REUSE_RATES, type ReuseRates } from "./reuse-rates.ts";
import { SessionReuse } from "./session-reuse.ts";
import type { ContextKind } from "../metrics/context-kind.ts";
import { randomIds, systemClock, type Clock, type IdGenerator } from "../model/ids.ts";
import { toolResultIndex, withCompactSummary } from "../model/compact-summary.ts";
import type { Message } from "../model/message.ts";
import { currentTurnStart, opensTurn } from "../model/turns.ts";
import { repairOrphans } from "../conversation/orphan-repair.ts";
import { remapAnchors } from "./anchor-remap.ts";
import type { Summarizer } from "../summarize/summarizer.ts";
import type { TokenCounter } from "../tokens/token-counter.ts";
import { UsageAnchor } from "./usage-anchor.ts";
import { cacheAnchor, rewriteStart } from "./cached-prefix.ts";
import {
  initialGovernorLiveState,
  persistedGovernorState,
  type GovernorLiveState,
  type GovernorState,
  copyGuard,
} from "./governor-state.ts";
import { checkpointPays, expectedRemainingRequests } from "./cache-economics.ts";
import { emergencyView } from "./emergency.ts";
import type { GovernanceEvent, GovernanceEventListener } from "./events.ts";
import { LoopDetector, type LoopCall, type LoopDetection } from "./loop-detector.ts";
import { MemoryOffloadStore, type OffloadStore } from "./offload-store.ts";
import { isContextOverflowError } from "../errors/overflow-recognition.ts";
import { governancePricing, type GovernancePolicy, type GovernancePolicyInput } from "./policy.ts";
import {
  runPipeline,
  sumTokens,
  type MemorySink,
  type Processor,
  type ProcessorContext,
  type WindowBudget,
} from "./processor.ts";
import { declaredTriggers, runsAtCheckpoints, stageProcessors, type GovernancePipeline } from "./pipeline.ts";
import { pipelineFromPolicy } from "./policy-pipeline.ts";
import { elidableInputTokens } from "./processors/elide-older-tool-inputs.ts";
import { fitNewestStep } from "./processors/truncate-tool-results.ts";
import { budgetExitNotice } from "./budget-exit.ts";
import { leadingSystemEnd } from "./compaction-plan.ts";
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
  /**
   * What to run: processors that declare when they run, and the governor's settings (`createPipeline`,
   * `presetPipeline`). Instead of `policy` and `processors`.
   */
  pipeline?: GovernancePipeline;
  /** Governance settings, made into a pipeline by `pipelineFromPolicy`. Default: the default preset. */
  policy?: GovernancePolicy | GovernancePolicyInput;
  /**
   * Processors run at checkpoints instead of the policy's (see `pipelineFromPolicy`): one that declares no
   * triggers runs when the policy's thresholds say.
   */
  processors?: readonly Processor[];
  /** Where offloaded and truncated outputs are kept. Default: in memory. */
  offloadStore?: OffloadStore;
  /**
   * Whether the agent can call `recall_tool_output` (default true: `session.run()` offers it, and so can your own
   * loop with `createRecallTool`). The notices of offloaded outputs and shortened arguments tell the agent to call
   * it; without it they only say the full text is kept outside the conversation (the stateful proxy, whose clients
   * run their own tools).
   */
  recall?: boolean;
  memorySink?: MemorySink;
  onEvent?: GovernanceEventListener;
  ids?: IdGenerator;
  clock?: Clock;
}

/**
 * A history the governor reads without copying it: its length, a message by index (negative from the end) and
 * the messages from an index on. `ConversationSnapshot` is one.
 */
export interface HistoryReader {
  readonly length: number;
  at(index: number): Message | undefined;
  tail(start: number): readonly Message[];
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
  /**
   * Indices in `messages` where payload builders put cache breakpoints besides the newest messages', oldest first:
   * the view's cache anchor — the end of the prefix the next checkpoint will leave as it is (see `cacheAnchor`),
   * so a rewrite of what follows still reads the settled history from the cache — and, when this request rewrote
   * history after the previous request's anchor, that one too: it is the prefix the provider holds now.
   */
  readonly cacheAnchors?: readonly number[];
  readonly loop?: LoopDetection;
}

/** What `recover` did after a provider overflow error. */
export interface RecoveryOutcome {
  /** Whether the caller should prepare and send the request again. */
  readonly retry: boolean;
  /** True when the context had to be cleared (only the current instruction remains). */
  readonly cleared: boolean;
  /** The `emergency-recovery` event of this recovery; undefined when nothing was done. */
  readonly event?: Extract<GovernanceEvent, { type: "emergency-recovery" }>;
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
 * const request = await governor.prepare(conversation.snapshot(), { fixedTokens: 3_000 });
 * const reply = await callModel(request.messages);
 * ```
 */
export class Governor {
  /** The governor's settings (`pipeline.settings`: the policy, for a governor made from one). */
  readonly policy: GovernancePolicy;
  /** What this governor runs. */
  readonly pipeline: GovernancePipeline;
  readonly window: WindowBudget;
  readonly #options: GovernorOptions;
  /** The processors run at checkpoints, in order, and those run in a stage of their own. */
  readonly #fold: readonly Processor[];
  readonly #onMessage: readonly Processor[];
  readonly #onOverflow: readonly Processor[];
  readonly #onUserRequest: readonly Processor[];
  /** The checkpoint triggers the processors declare. */
  readonly #triggers: {
    readonly payloadShares: readonly number[];
    readonly turnCounts: readonly number[];
    readonly messageCounts: readonly number[];
    readonly toolOutput: readonly { readonly tokens: number; readonly windowShare?: number }[];
    readonly settledHistory: boolean;
  };
  readonly #offloadStore: OffloadStore;
  readonly #ids: IdGenerator;
  readonly #clock: Clock;
  /** Everything that changes between requests (see `GovernorLiveState`). */
  #state: GovernorLiveState = initialGovernorLiveState();
  readonly #tokenCache = new WeakMap<Message, number>();
  #tokenizerCalls = 0;
  /** What this session's agent used again so far, and the reuse rates governance weighs this request. */
  #reuse = new SessionReuse();
  #reuseRates: ReuseRates;
  /** View messages that are history messages as they came (a snapshot stores only their ids). */
  readonly #unchanged = new WeakSet<Message>();

  constructor(options: GovernorOptions) {
    this.#options = options;
    if (
      options.pipeline !== undefined &&
      (options.policy !== undefined || options.processors !== undefined)
    ) {
      throw new ValidationError(
        "a governor takes either a pipeline or a policy (with processors); put the settings in the pipeline",
      );
    }
    this.pipeline = options.pipeline ?? pipelineFromPolicy(options.policy ?? {}, options.processors);
    this.policy = this.pipeline.settings;
    this.#reuseRates = this.#learnedRates();
    const reservedOutput =
      options.reservedOutputTokens ??
      Math.min(20_000, options.maxOutputTokens ?? 8_192, Math.floor(options.contextWindow / 4));
    this.window = {
      contextWindow: options.contextWindow,
      reservedOutput,
      usable: Math.max(0, options.contextWindow - reservedOutput),
    };
    const { processors } = this.pipeline;
    this.#fold = processors.filter(runsAtCheckpoints);
    this.#onMessage = stageProcessors(processors, "each-message");
    this.#onOverflow = stageProcessors(processors, "overflow");
    this.#onUserRequest = stageProcessors(processors, "user-request");
    this.#triggers = {
      payloadShares: declaredTriggers(processors, "payload-share")
        .map((trigger) => trigger.share)
        .filter((share) => share > 0),
      turnCounts: declaredTriggers(processors, "turn-count")
        .map((trigger) => trigger.above)
        .filter((above) => above > 0),
      messageCounts: declaredTriggers(processors, "message-count")
        .map((trigger) => trigger.above)
        .filter((above) => above > 0),
      toolOutput: declaredTriggers(processors, "tool-output").filter((trigger) => trigger.tokens > 0),
      settledHistory: declaredTriggers(processors, "settled-history").length > 0,
    };
    this.#offloadStore = options.offloadStore ?? new MemoryOffloadStore();
    this.#ids = options.ids ?? randomIds;
    this.#clock = options.clock ?? systemClock;
  }

  /** How many times the token counter ran (each message is counted once). */
  get tokenizerCalls(): number {
    return this.#tokenizerCalls;
  }

  /** The governed view as of the last request (without notices or orphan repair). */
  get view(): readonly Message[] {
    return this.#state.view;
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
   * growing at its end between calls; any other change is detected and rebuilds the view): an array, or a
   * `HistoryReader` such as a `ConversationSnapshot`, which the governor reads without copying the history.
   */
  async prepare(
    history: readonly Message[] | HistoryReader,
    options: PrepareOptions = {},
  ): Promise<GovernedRequest> {
    this.#state.requests++;
    const events: GovernanceEvent[] = [];
    /** Events listeners already heard while the work ran (a compaction's start, before its summarizer). */
    const heard = new WeakSet<GovernanceEvent>();
    const publish = (event: GovernanceEvent) => {
      events.push(event);
      if (!heard.has(event)) this.#options.onEvent?.(event);
    };
    const announce = (event: GovernanceEvent) => {
      heard.add(event);
      this.#options.onEvent?.(event);
    };
    const continues =
      history.length >= this.#state.covered &&
      (this.#state.covered === 0 || history.at(this.#state.covered - 1)?.id === this.#state.lastCoveredId);
    const rebuilt = !continues;
    if (rebuilt) this.#resetView();
    // Only what is new since the last request is copied: per-request work does not grow with the history.
    const fresh = "tail" in history ? history.tail(this.#state.covered) : history.slice(this.#state.covered);
    if (rebuilt) this.#reuse = new SessionReuse();
    for (const message of fresh) this.#reuse.observe(message);
    this.#reuseRates = this.#learnedRates();
    this.#state.covered = history.length;
    this.#state.lastCoveredId = history.at(-1)?.id;
    const counted = options.fixedTokens ?? 0;
    const viewBefore = this.#state.viewTokens;
    const loop = await this.#ingest(fresh, counted, publish, options.signal);
    this.#state.freshTokens = this.#state.viewTokens - viewBefore;

    // Every decision is taken on the provider-anchored total of what would be sent (orphan repair included),
    // re-derived for the view being decided on: the view before a checkpoint, the one after, the notice.
    // A checkpoint is mandatory when the request would overflow, the history was rewritten underneath, or a
    // processor's trigger says so; optional (taken when it pays) when one's optional trigger says so.
    const { policy, window } = this;
    let repaired = this.#sent(this.#state.view);
    const total = this.#anchored(counted, repaired.tokens);
    const overflow = total + window.reservedOutput > window.contextWindow;
    const triggers = this.#triggers;
    const mustCompact = triggers.payloadShares.some((share) => total > share * window.usable);
    const turnsOver = triggers.turnCounts.some((above) => this.#state.turnsInView > above);
    const messagesOver = triggers.messageCounts.some((above) => this.#state.view.length > above);
    const mandatory = overflow || mustCompact || turnsOver || messagesOver || (rebuilt && history.length > 0);
    let checkpoint = false;
    const previousView = this.#state.view;
    if (mandatory || this.#optionalCandidate()) {
      checkpoint = await this.#checkpoint(counted, mandatory, publish, announce, options.signal);
    }
    const anchors = this.#nextAnchors(previousView, checkpoint);

    if (checkpoint) repaired = this.#sent(this.#state.view);
    if (repaired.messages !== this.#state.view) {
      publish({
        type: "orphans-repaired",
        synthesized: repaired.report.synthesized.length,
        dropped: repaired.report.dropped.length,
        tokensBefore: this.#anchored(counted, this.#state.viewTokens),
        tokensAfter: this.#anchored(counted, repaired.tokens),
        messageIds: [],
      });
    }
    const messages = repaired.messages === this.#state.view ? [...this.#state.view] : [...repaired.messages];
    let messageTokens = repaired.tokens;
    const sent = this.#anchored(counted, messageTokens);
    if (policy.budgetExitShare > 0 && sent > policy.budgetExitShare * window.usable) {
      const notice = budgetExitNotice(this.#state.view, sent, window, this.#ids, this.#clock);
      const withNotice = notice ? this.#anchored(counted, messageTokens + this.tokensOf(notice)) : Infinity;
      if (notice && withNotice + window.reservedOutput <= window.contextWindow) {
        messages.push(notice);
        messageTokens += this.tokensOf(notice);
        publish({ type: "budget-exit-notice", tokensBefore: sent, tokensAfter: withNotice, messageIds: [] });
      }
    }
    const counterTotal = counted + messageTokens;
    this.#state.anchor = anchors.at(-1);
    this.#state.cached = {
      at: this.#clock().getTime(),
      ends: [-1, ...anchors, newestAssistant(this.#state.view) - 1, this.#state.view.length - 1],
    };
    return {
      messages,
      events,
      tokens: {
        ...window,
        fixed: counted,
        messages: messageTokens,
        total: counterTotal,
        ...(this.#state.usage !== undefined && {
          anchoredTotal: this.#usage().estimate(counterTotal),
        }),
      },
      checkpoint,
      // The anchors are positions in the view; `messages` went through orphan repair (results inserted, orphans
      // dropped), so each is moved onto its message there.
      ...(anchors.length > 0 && { cacheAnchors: remapAnchors(anchors, this.#state.view, messages) }),
      ...(loop !== undefined && { loop }),
    };
  }

  /**
   * The cache anchors of the view just settled (see `GovernedRequest.cacheAnchors`): its own, preceded by the
   * previous request's when a checkpoint rewrote history after it (that prefix is what the provider holds; the
   * new anchor is written by this request, for the next).
   */
  #nextAnchors(previousView: readonly Message[], checkpoint: boolean): number[] {
    const own = cacheAnchor(this.#state.view, this);
    const anchors = own === undefined ? [] : [own];
    const previous = this.#state.anchor;
    if (!checkpoint || previous === undefined || previous === own) return anchors;
    for (let index = 0; index <= previous; index++)
      if (this.#state.view[index] !== previousView[index]) return anchors;
    return [previous, ...anchors].sort((a, b) => a - b);
  }

  /**
   * Call after a provider rejected a request as too long (any provider's error shape). First time: the whole
   * view is summarised to the memory sink and trimmed aggressively (10k-character caps, last 5 turns) — retry.
   * Second time in a row: the context is cleared down to the current instruction, and the caller is told. A third
   * time in a row does nothing (both stages are spent: the error stands).
   */
  async recover(error: unknown, signal?: AbortSignal): Promise<RecoveryOutcome> {
    if (!isContextOverflowError(error) || this.#state.emergencyStage >= 2) return { retry: false, cleared: false };
    const before = this.#state.viewTokens;
    const stage = this.#state.emergencyStage === 0 ? "trimmed" : "cleared";
    const context = this.#context(0, true, () => undefined, signal);
    const { view, removedIds } = await emergencyView(this.#state.view, stage, context);
    this.#commit(view);
    this.#state.emergencyStage++;
    const event = {
      type: "emergency-recovery",
      stage,
      tokensBefore: before,
      tokensAfter: this.#state.viewTokens,
      messageIds: removedIds,
    } as const;
    this.#options.onEvent?.(event);
    return { retry: stage === "trimmed", cleared: stage === "cleared", event };
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
    let next: readonly Message[] = this.#state.view;
    for (const processor of this.#onUserRequest) next = await processor.process(next, context);
    if (next !== this.#state.view) this.#commit(next);
    for (const event of events) this.#options.onEvent?.(event);
    return events;
  }

  /**
   * Sets the `compactSummary` of tool result `callId` on the view's own copy of its message (which governance may
   * have capped or offloaded), so the next checkpoint can send the summary instead. Nothing is sent differently
   * before then. False when the result is not in the view.
   */
  attachCompactSummary(callId: string, summary: string): boolean {
    const index = toolResultIndex(this.#state.view, callId);
    if (index < 0) return false;
    const old = this.#state.view[index]!;
    const updated = withCompactSummary(old, callId, summary);
    this.#state.view = this.#state.view.with(index, updated);
    this.#state.viewTokens += this.tokensOf(updated) - this.tokensOf(old);
    return true;
  }

  /**
   * Call with the provider's reported prompt tokens (`usage.input`, cached ones included) of a request this
   * governor prepared: later decisions are anchored on that truth, and only the change since is estimated.
   */
  observeUsage(prepared: RequestTokens, reportedInputTokens: number): void {
    const anchor = this.#usage();
    anchor.observe(prepared.total, reportedInputTokens);
    this.#state.usage = anchor.state;
  }

  /** The provider-anchored tokens of a payload of `fixed` tokens plus messages of `messageTokens`. */
  #anchored(fixed: number, messageTokens: number): number {
    return this.#usage().estimate(fixed + messageTokens);
  }

  /** The provider-usage anchor of the state (see `UsageAnchor`). */
  #usage(): UsageAnchor {
    const anchor = new UsageAnchor();
    anchor.restore(this.#state.usage);
    return anchor;
  }

  /** What is sent for `view`: the view, orphan-repaired (the view itself when nothing needed repair). */
  #sent(view: readonly Message[]): ReturnType<typeof repairOrphans> & { tokens: number } {
    const repaired = repairOrphans(view);
    const tokens =
      repaired.messages === this.#state.view
        ? this.#state.viewTokens
        : sumTokens(repaired.messages, this.tokensOf);
    return { ...repaired, tokens };
  }

  /**
   * The window in the local counter's units, as the processors see it: the model's window divided by the anchor's
   * scale. A processor comparing `fixedTokens + sumTokens(view)` with shares of it decides on the anchored figure.
   */
  #counterWindow(): WindowBudget {
    const scale = this.#usage().scale;
    if (scale === 1) return this.window;
    const contextWindow = Math.floor(this.window.contextWindow / scale);
    const usable = Math.floor(this.window.usable / scale);
    return { contextWindow, reservedOutput: contextWindow - usable, usable };
  }

  /** The offload thresholds the processors apply (in the counter's units, like their window). */
  #thresholds(): ReturnType<typeof offloadThresholds> {
    return offloadThresholds({ policy: this.policy, window: this.#counterWindow() });
  }

  /**
   * Everything this governor carries to the next request, as a plain value to persist beside the session (see
   * `GovernorState`): a governor given it back with `restore` after a restart prepares exactly what this one
   * would have.
   */
  snapshot(): GovernorState {
    return {
      ...persistedGovernorState(this.#state, (message) => this.#unchanged.has(message)),
      reuse: this.#reuse.counts(),
    };
  }

  /**
   * Takes back a `snapshot` for `history`, the session's history as loaded again (summarised ranges replaced by
   * their summaries). Returns false, changing nothing, when the state does not fit that history (a message it
   * names is gone, or the history no longer holds what it covered): the next request then rebuilds the view.
   * `originals` are the stored messages summaries replaced, when the state's reuse count still follows some of
   * them (`governorStateNeedsOriginals`); without them that count goes on without those messages.
   */
  restore(state: GovernorState, history: readonly Message[], originals: readonly Message[] = []): boolean {
    const byId = new Map(history.map((message) => [message.id, message]));
    const view: Message[] = [];
    for (const entry of state.view) {
      const message = "id" in entry ? byId.get(entry.id) : entry.message;
      if (message === undefined) return false;
      view.push(message);
    }
    const covered =
      state.lastCoveredId === undefined
        ? 0
        : history.findIndex((message) => message.id === state.lastCoveredId) + 1;
    if (state.lastCoveredId !== undefined && covered === 0) return false;
    this.#commit(view);
    for (const [index, entry] of state.view.entries()) if ("id" in entry) this.#unchanged.add(view[index]!);
    this.#state.covered = covered;
    this.#state.lastCoveredId = state.lastCoveredId;
    this.#state.requests = state.requests;
    this.#state.emergencyStage = state.emergencyStage;
    this.#state.piled = { ...state.piled };
    this.#state.usage = state.usage === undefined ? undefined : { ...state.usage };
    this.#state.guard = copyGuard(state.guard);
    this.#state.recentCalls = [...this.#loopDetector(state.recentCalls).recentCalls];
    this.#state.cached = state.cached;
    this.#state.anchor = state.anchor;
    const originalsById = new Map(originals.map((message) => [message.id, message]));
    this.#reuse = SessionReuse.resume(
      state.reuse,
      history,
      covered,
      (id) => byId.get(id) ?? originalsById.get(id),
    );
    this.#reuseRates = this.#learnedRates();
    return true;
  }

  /** Call after a successful model response: ends an emergency sequence. */
  recordSuccess(): void {
    this.#state.emergencyStage = 0;
  }

  /** The policy's reuse rates (the measured ones for kinds it leaves out) blended with this session's counts. */
  #learnedRates(): ReuseRates {
    const given = this.policy.reuseRates;
    const prior = Object.fromEntries(
      Object.entries(DEFAULT_REUSE_RATES).map(([kind, rates]) => [
        kind,
        given?.[kind as ContextKind] ?? rates,
      ]),
    ) as unknown as ReuseRates;
    return this.#reuse.rates(prior, this.policy.reuseRatesWeight);
  }

  /** A loop detector remembering `recentCalls` (the newest of them its window holds). */
  #loopDetector(recentCalls: readonly LoopCall[]): LoopDetector {
    const detector = new LoopDetector({
      repeatThreshold: this.policy.loopRepeatThreshold,
      cycleRepeats: this.policy.loopCycleRepeats,
    });
    detector.restore(recentCalls);
    return detector;
  }

  /** Forgets the view and what was derived from it (the inflation guard and the request count stay). */
  #resetView(): void {
    this.#state.usage = undefined;
    this.#state.view = [];
    this.#state.viewTokens = 0;
    this.#state.covered = 0;
    this.#state.turnsInView = 0;
    this.#state.piled.toolTokens = 0;
    this.#state.piled.inputTokens = 0;
    this.#state.piled.nextCheckAt = 0;
    this.#state.unsettledTokens = 0;
    this.#state.piled.nextSettledCheckAt = 0;
    this.#state.recentCalls = [];
  }

  async #ingest(
    fresh: readonly Message[],
    fixed: number,
    publish: (event: GovernanceEvent) => void,
    signal: AbortSignal | undefined,
  ): Promise<LoopDetection | undefined> {
    const loops = this.#loopDetector(this.#state.recentCalls);
    try {
      return await this.#ingestInto(fresh, loops, this.#context(fixed, false, publish, signal), publish);
    } finally {
      this.#state.recentCalls = [...loops.recentCalls];
    }
  }

  async #ingestInto(
    fresh: readonly Message[],
    loops: LoopDetector,
    context: ProcessorContext,
    publish: (event: GovernanceEvent) => void,
  ): Promise<LoopDetection | undefined> {
    let loop: LoopDetection | undefined;
    for (const original of fresh) {
      const detection = loops.observe(original);
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
      // The processors that run on each new message (the cap on a single tool result), each on the last's output.
      let arrived: readonly Message[] = [original];
      for (const processor of this.#onMessage) arrived = await processor.process(arrived, context);
      for (const message of arrived) {
        const tokens = await this.#tokensOfAsync(message);
        if (message === original) this.#unchanged.add(original);
        this.#state.view.push(message);
        this.#state.viewTokens += tokens;
        this.#state.unsettledTokens += tokens;
        if (message.role === "tool") this.#state.piled.toolTokens += tokens;
        this.#state.piled.inputTokens += elidableInputTokens(message, this);
        if (opensTurn(message)) this.#state.turnsInView++;
      }
    }
    return loop;
  }

  /**
   * Whether to consider an optional checkpoint: enough history came since the newest summary to summarise some of
   * it, or enough tool output piled up outside the protection window for a batch.
   */
  #optionalCandidate(): boolean {
    const { policy } = this;
    // The cache expired since the last request: this one writes everything anyway, so a rewrite is free.
    const cached = this.#state.cached;
    const ttl = governancePricing(policy).ttlMs;
    if (policy.pricing !== "none" && cached !== undefined && this.#clock().getTime() - cached.at > ttl)
      return true;
    const { protect, minPrunable } = this.#thresholds();
    const { piled } = this.#state;
    const settledReady =
      this.#triggers.settledHistory &&
      this.#state.unsettledTokens >= piled.nextSettledCheckAt &&
      this.#state.unsettledTokens >= protect + minPrunable;
    if (settledReady) return true;
    const piledTokens = piled.toolTokens + piled.inputTokens;
    if (piledTokens < piled.nextCheckAt) return false;
    const prunable = piledTokens - protect;
    const usable = this.#counterWindow().usable;
    return this.#triggers.toolOutput.some(
      ({ tokens, windowShare }) =>
        prunable >= (windowShare === undefined ? tokens : Math.min(tokens, Math.floor(usable * windowShare))),
    );
  }

  async #checkpoint(
    fixed: number,
    mandatory: boolean,
    publish: (event: GovernanceEvent) => void,
    announce: (event: GovernanceEvent) => void,
    signal: AbortSignal | undefined,
  ): Promise<boolean> {
    const pending: GovernanceEvent[] = [];
    // A compaction's start is told to listeners as it happens (a UI shows it while the summarizer runs); the rest
    // waits until the checkpoint is decided, since a fold that does not pay is thrown away.
    const context = this.#context(
      fixed,
      false,
      (event) => {
        pending.push(event);
        if (event.type === "compaction-start") announce(event);
      },
      signal,
    );
    let next = await runPipeline(this.#fold, this.#state.view, context);
    const nextTokens = sumTokens(next, this.tokensOf);
    if (!mandatory && this.policy.cacheAware && next !== this.#state.view) {
      const firstChange = next.findIndex((message, index) => message !== this.#state.view[index]);
      const rewritten = this.#rewrittenTokens(next, firstChange < 0 ? next.length : firstChange);
      const pays = checkpointPays(
        {
          savedTokens: this.#state.viewTokens - nextTokens,
          rewrittenTokens: rewritten,
          remainingRequests: expectedRemainingRequests(this.#state.requests),
        },
        governancePricing(this.policy),
      );
      if (!pays) {
        this.#postponeOptionalCheck();
        for (const started of pending.filter((event) => event.type === "compaction-start")) {
          publish(started);
          publish({
            type: "compaction-rolled-back",
            reason: "the checkpoint would not pay for rewriting the cached prefix; its summary is not used",
            tokensBefore: started.tokensBefore,
            tokensAfter: started.tokensBefore,
            messageIds: [],
          });
        }
        publish({
          type: "checkpoint-skipped",
          reason:
            "rewriting the cached prefix would cost more than it saves over the expected remaining requests",
          tokensBefore: this.#anchored(fixed, this.#state.viewTokens),
          tokensAfter: this.#anchored(fixed, nextTokens),
          messageIds: [],
        });
        return false;
      }
    }
    const { window } = this;
    const required = (view: readonly Message[]) =>
      this.#anchored(fixed, this.#sent(view).tokens) + window.reservedOutput;
    if (this.policy.preflight && required(next) > window.contextWindow) {
      const fitted = await this.#fit(next, fixed, pending, signal);
      next = fitted.view;
      if (required(next) > window.contextWindow) {
        for (const event of pending) publish(event);
        this.#commit(next);
        throw new ContextOverflowError(
          {
            requiredTokens: required(next),
            windowTokens: window.contextWindow,
            reservedOutputTokens: window.reservedOutput,
          },
          "governance could not shrink the protected part (current instruction and newest step) enough",
        );
      }
      pending.push({
        type: "overflow-prevented",
        windowTokens: window.contextWindow,
        tokensBefore: this.#anchored(fixed, this.#state.viewTokens),
        tokensAfter: required(next) - window.reservedOutput,
        messageIds: fitted.dropped,
      });
    }
    for (const event of pending) publish(event);
    if (next === this.#state.view) {
      // Nothing was worth doing: without this, every request would re-run the pipeline over the whole view.
      if (!mandatory) this.#postponeOptionalCheck();
      return false;
    }
    this.#commit(next);
    return true;
  }

  /**
   * Shrinks a view that would overflow, each stage only when the ones before did not suffice: compaction with a
   * minimal tail; the newest step's results cut to share what is left of the window; and, when even that leaves
   * no room because of older history (summaries included), the protected part alone — leading system messages,
   * the current instruction and the newest step — its results cut to fit (unless compaction is off, and only
   * when that fits). Returns the ids it dropped.
   */
  async #fit(
    view: readonly Message[],
    fixed: number,
    pending: GovernanceEvent[],
    signal: AbortSignal | undefined,
  ): Promise<{ view: readonly Message[]; dropped: string[] }> {
    const { window } = this;
    const fits = (candidate: readonly Message[]) =>
      this.#anchored(fixed, this.#sent(candidate).tokens) + window.reservedOutput <= window.contextWindow;
    // What the messages may use, in the counter's tokens: the anchored usable window less the fixed tokens and
    // what orphan repair will add.
    const budget = (candidate: readonly Message[]) =>
      this.#usage().countedLimit(window.usable) -
      fixed -
      (this.#sent(candidate).tokens - sumTokens(candidate, this.tokensOf));
    const forced = this.#context(fixed, true, (event) => pending.push(event), signal);
    const compacted = await runPipeline(this.#onOverflow, view, forced);
    if (fits(compacted)) return { view: compacted, dropped: [] };
    const capped: GovernanceEvent[] = [];
    const fitted = await fitNewestStep(compacted, budget(compacted), {
      ...forced,
      emit: (event) => capped.push(event),
    });
    // Dropping older history is compaction too: not when the pipeline has none for an overflow.
    const minimal = this.#onOverflow.length > 0 ? protectedPart(compacted) : compacted;
    if (fits(fitted) || minimal.length === compacted.length) {
      pending.push(...capped);
      return { view: fitted, dropped: [] };
    }
    const minimalEvents: GovernanceEvent[] = [];
    const fittedMinimal = await fitNewestStep(minimal, budget(minimal), {
      ...forced,
      emit: (event) => minimalEvents.push(event),
    });
    if (!fits(fittedMinimal)) {
      // Refused anyway: the view keeps its older history for the requests after this one.
      pending.push(...capped);
      return { view: fitted, dropped: [] };
    }
    pending.push(...minimalEvents);
    const kept = new Set(minimal);
    const dropped = compacted.filter((message) => !kept.has(message)).map((message) => message.id);
    return { view: fittedMinimal, dropped };
  }

  /**
   * Tokens a rewrite of the view from `firstChange` writes to the cache that the next request would otherwise read
   * from it: from where the provider's cached prefix stops (a breakpoint before the change, for Anthropic) to the
   * end of what was already sent. 0 when nothing is cached any more.
   */
  #rewrittenTokens(next: readonly Message[], firstChange: number): number {
    const start = this.#rewriteStart(firstChange);
    if (start === undefined) return 0;
    return Math.max(0, sumTokens(next.slice(start), this.tokensOf) - this.#state.freshTokens);
  }

  #rewriteStart = (firstChange: number): number | undefined =>
    rewriteStart(firstChange, this.#state.cached, governancePricing(this.policy), this.#clock().getTime());

  /** An optional checkpoint was not taken: consider the next one only after more tool traffic piled up. */
  #postponeOptionalCheck(): void {
    const step = Math.max(1_000, this.#thresholds().minPrunable / 2);
    this.#state.piled.nextSettledCheckAt = this.#state.unsettledTokens + step;
    this.#state.piled.nextCheckAt = this.#state.piled.toolTokens + this.#state.piled.inputTokens + step;
  }

  #commit(next: readonly Message[]): void {
    this.#state.view = [...next];
    this.#state.viewTokens = sumTokens(this.#state.view, this.tokensOf);
    this.#state.turnsInView = this.#state.view.filter(opensTurn).length;
    const { protect } = this.#thresholds();
    let recentTools = 0;
    for (const message of this.#state.view)
      if (message.role === "tool" && !isGoverned(message)) recentTools += this.tokensOf(message);
    this.#state.piled.toolTokens = Math.min(recentTools, protect);
    // Arguments left long now are protected or not worth it; new traffic (counted at ingest) brings them back.
    this.#state.piled.inputTokens = 0;
    this.#state.piled.nextCheckAt = 0;
    const lastSummary = this.#state.view.findLastIndex((message) => message.kind === "summary");
    this.#state.unsettledTokens = sumTokens(this.#state.view.slice(lastSummary + 1), this.tokensOf);
    this.#state.piled.nextSettledCheckAt = 0;
  }

  #context(
    fixedTokens: number,
    force: boolean,
    emit: (event: GovernanceEvent) => void,
    signal: AbortSignal | undefined,
  ): ProcessorContext {
    const usage = this.#usage();
    return {
      policy: this.policy,
      // In the counter's units (see #counterWindow); an offset the counter misses is carried as fixed tokens.
      window: this.#counterWindow(),
      fixedTokens: fixedTokens + Math.ceil(usage.offset / usage.scale),
      tokensOf: this.tokensOf,
      summarizer: this.#options.summarizer,
      offloadStore: this.#offloadStore,
      recall: this.#options.recall ?? true,
      ...(this.#options.memorySink !== undefined && { memorySink: this.#options.memorySink }),
      guard: this.#state.guard,
      force,
      requestsSoFar: this.#state.requests,
      reuseRates: this.#reuseRates,
      rewriteStart: this.#rewriteStart,
      freshTokens: this.#state.freshTokens,
      ids: this.#ids,
      clock: this.#clock,
      ...(signal !== undefined && { signal }),
      emit,
    };
  }
}

/** What a request cannot do without: leading system messages, the current instruction, its run's newest step. */
function protectedPart(view: readonly Message[]): Message[] {
  const start = currentTurnStart(view);
  const instruction = view[start];
  const newestStep = view.findLastIndex((message) => message.role === "assistant");
  return [
    ...view.slice(0, leadingSystemEnd(view)),
    ...(instruction !== undefined && opensTurn(instruction) ? [instruction] : []),
    ...(newestStep > start ? view.slice(newestStep) : []),
  ];
}

/** Index of the newest assistant message, or -1. */
function newestAssistant(messages: readonly Message[]): number {
  return messages.findLastIndex((message) => message.role === "assistant");
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
