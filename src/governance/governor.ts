import { isContextOverflowError } from "../errors/overflow-recognition.ts";
import { toolResultIndex, withCompactSummary } from "../model/compact-summary.ts";
import type { Message } from "../model/message.ts";
import type { Summarizer } from "../summarize/summarizer.ts";
import { remapAnchors } from "./anchor-remap.ts";
import { budgetExitNotice } from "./budget-exit.ts";
import { optionalCandidate, takeCheckpoint } from "./checkpoint.ts";
import { emergencyView } from "./emergency.ts";
import type { GovernanceEvent } from "./events.ts";
import { GovernorCore } from "./governor-core.ts";
import type {
  GovernedRequest,
  GovernorOptions,
  HistoryReader,
  PrepareOptions,
  RecoveryOutcome,
  RequestTokens,
} from "./governor-options.ts";
import type { GovernorSettings } from "./governor-settings.ts";
import { copyGuard, persistedGovernorState, restoredPiled, type GovernorState } from "./governor-state.ts";
import type { OffloadStore } from "./offload-store.ts";
import type { GovernancePipeline } from "./pipeline.ts";
import type { WindowBudget } from "./processor.ts";
import { SessionReuse } from "./session-reuse.ts";

export type * from "./governor-options.ts";

/**
 * Governs one session's history, request after request. Between checkpoints the view only grows at its end,
 * so request N+1 starts with request N's messages byte for byte (prompt-cache hits); a checkpoint (compaction,
 * or a truncation/offload batch that pays for its cache rewrite) rewrites older history. Per-request work is
 * proportional to what is new: messages are counted once and the view is kept between requests.
 *
 * @example
 * ```ts
 * const governor = createGovernor({ contextWindow: 200_000, counter, summarizer, pipeline: preset("default") });
 * const request = await governor.prepare(conversation.snapshot(), { fixedTokens: 3_000 });
 * const reply = await callModel(request.messages);
 * ```
 */
export class Governor {
  readonly #core: GovernorCore;

  constructor(options: GovernorOptions) {
    this.#core = new GovernorCore(options);
  }

  /** What this governor runs. */
  get pipeline(): GovernancePipeline {
    return this.#core.pipeline;
  }

  /** The governor's own settings (`pipeline.settings`). */
  get settings(): GovernorSettings {
    return this.#core.settings;
  }

  /** The model's window, the output reserve and what the payload may use. */
  get window(): WindowBudget {
    return this.#core.window;
  }

  /** How many times the token counter ran (each message is counted once). */
  get tokenizerCalls(): number {
    return this.#core.tokens.calls;
  }

  /** The governed view as of the last request (without notices or orphan repair). */
  get view(): readonly Message[] {
    return this.#core.state.view;
  }

  /** The store holding offloaded outputs (for `recall_tool_output`). */
  get offloadStore(): OffloadStore {
    return this.#core.offloadStore;
  }

  /** Tokens of one message, counted once and cached. */
  get tokensOf(): (message: Message) => number {
    return this.#core.tokensOf;
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
    const core = this.#core;
    const state = core.state;
    state.requests++;
    const events: GovernanceEvent[] = [];
    /** Events listeners already heard while the work ran (a compaction's start, before its summarizer). */
    const heard = new WeakSet<GovernanceEvent>();
    const publish = (event: GovernanceEvent) => {
      events.push(event);
      if (!heard.has(event)) core.options.onEvent?.(event);
    };
    const announce = (event: GovernanceEvent) => {
      heard.add(event);
      core.options.onEvent?.(event);
    };
    const rebuilt = !(
      history.length >= state.covered &&
      (state.covered === 0 || history.at(state.covered - 1)?.id === state.lastCoveredId)
    );
    if (rebuilt) core.resetView();
    // Only what is new since the last request is copied: per-request work does not grow with the history.
    const fresh = "tail" in history ? history.tail(state.covered) : history.slice(state.covered);
    for (const message of fresh) core.reuse.observe(message);
    core.reuseRates = core.learnedRates();
    state.covered = history.length;
    state.lastCoveredId = history.at(-1)?.id;
    const counted = options.fixedTokens ?? 0;
    const viewBefore = core.viewFigures.tokens;
    const loop = await core.ingest(fresh, counted, publish, options.signal);
    core.freshTokens = core.viewFigures.tokens - viewBefore;

    // Every decision is taken on the provider-anchored total of what would be sent (orphan repair included),
    // re-derived for the view being decided on: the view before a checkpoint, the one after, the notice.
    // A checkpoint is mandatory when the request would overflow, the history was rewritten underneath, or a
    // processor's trigger says so; optional (taken when it pays) when one's optional trigger says so.
    const { settings, window } = core;
    let repaired = core.sent(state.view);
    const total = core.anchored(counted, repaired.tokens);
    const schedule = core.schedule;
    const mandatory =
      total + window.reservedOutput > window.contextWindow ||
      schedule.payloadShares.some((share) => total > share * window.usable) ||
      schedule.turnCounts.some((above) => core.viewFigures.turns > above) ||
      schedule.messageCounts.some((above) => state.view.length > above) ||
      (rebuilt && history.length > 0);
    let checkpoint = false;
    const previousView = state.view;
    // An optional checkpoint waits for a request that brings something: a retry sends what was sent.
    if (mandatory || (fresh.length > 0 && optionalCandidate(core))) {
      checkpoint = await takeCheckpoint(core, counted, mandatory, publish, announce, options.signal);
    }
    const anchors = nextAnchors(core, previousView, checkpoint);
    // Work ahead follows what arrives: a request prepared again with nothing new tokenises nothing.
    if (fresh.length > 0) await core.prepareAhead(counted, options.signal);

    if (checkpoint) repaired = core.sent(core.state.view);
    if (repaired.messages !== core.state.view) {
      publish({
        type: "orphans-repaired",
        synthesized: repaired.report.synthesized.length,
        dropped: repaired.report.dropped.length,
        tokensBefore: core.anchored(counted, core.viewFigures.tokens),
        tokensAfter: core.anchored(counted, repaired.tokens),
        messageIds: [],
      });
    }
    const messages = [...repaired.messages];
    let messageTokens = repaired.tokens;
    const sent = core.anchored(counted, messageTokens);
    if (settings.budgetExitShare > 0 && sent > settings.budgetExitShare * window.usable) {
      const notice = budgetExitNotice(core.state.view, sent, window, core.ids, core.clock);
      const withNotice = notice ? core.anchored(counted, messageTokens + core.tokensOf(notice)) : Infinity;
      if (notice && withNotice + window.reservedOutput <= window.contextWindow) {
        messages.push(notice);
        messageTokens += core.tokensOf(notice);
        publish({ type: "budget-exit-notice", tokensBefore: sent, tokensAfter: withNotice, messageIds: [] });
      }
    }
    const counterTotal = counted + messageTokens;
    const view = core.state.view;
    core.state.anchor = anchors.at(-1);
    const newestStep = view.findLastIndex((message) => message.role === "assistant");
    core.state.cached = {
      at: core.clock().getTime(),
      ends: [-1, ...anchors, newestStep - 1, view.length - 1],
    };
    return {
      messages,
      events,
      tokens: {
        ...window,
        fixed: counted,
        messages: messageTokens,
        total: counterTotal,
        ...(core.state.usage !== undefined && { anchoredTotal: core.usage().estimate(counterTotal) }),
      },
      checkpoint,
      // The anchors are positions in the view; `messages` went through orphan repair (results inserted, orphans
      // dropped), so each is moved onto its message there.
      ...(anchors.length > 0 && { cacheAnchors: remapAnchors(anchors, view, messages) }),
      ...(loop !== undefined && { loop }),
    };
  }

  /**
   * Call after a provider rejected a request as too long (any provider's error shape). First time: the whole
   * view is summarised to the memory sink and trimmed aggressively (10k-character caps, last 5 turns) — retry.
   * Second time in a row: the context is cleared down to the current instruction, and the caller is told.
   * Resolves with what it did, its `emergency-recovery` event included (also told to `onEvent`). A third time in a
   * row does nothing (both stages are spent: the error stands).
   */
  async recover(error: unknown, signal?: AbortSignal): Promise<RecoveryOutcome> {
    const core = this.#core;
    if (!isContextOverflowError(error) || core.state.emergencyStage >= 2)
      return { retry: false, cleared: false };
    const before = core.viewFigures.tokens;
    const stage = core.state.emergencyStage === 0 ? "trimmed" : "cleared";
    const context = core.context(0, true, () => undefined, signal);
    const { view, removedIds } = await emergencyView(core.state.view, stage, context);
    core.commit(view);
    core.state.emergencyStage++;
    const event = {
      type: "emergency-recovery",
      stage,
      tokensBefore: before,
      tokensAfter: core.viewFigures.tokens,
      messageIds: removedIds,
    } as const;
    core.options.onEvent?.(event);
    return { retry: stage === "trimmed", cleared: stage === "cleared", event };
  }

  /**
   * User-initiated compaction (`/compact [focus]`): summarises the middle of the current view now, whatever the
   * thresholds say, optionally focused. Resolves with the events; the view is rewritten only when it shrank.
   */
  async compact(
    options: { focus?: string; fixedTokens?: number; signal?: AbortSignal; summarizer?: Summarizer } = {},
  ): Promise<GovernanceEvent[]> {
    const core = this.#core;
    const events: GovernanceEvent[] = [];
    const context = {
      ...core.context(options.fixedTokens ?? 0, false, (event) => events.push(event), options.signal),
      ...(options.summarizer !== undefined && { summarizer: options.summarizer }),
      manual: options.focus === undefined ? {} : { focus: options.focus },
    };
    let next: readonly Message[] = core.state.view;
    for (const processor of core.schedule.onUserRequest) next = await processor.process(next, context);
    if (next !== core.state.view) core.commit(next);
    for (const event of events) core.options.onEvent?.(event);
    return events;
  }

  /**
   * Sets the `compactSummary` of tool result `callId` on the view's own copy of its message (which governance may
   * have capped or offloaded), so the next checkpoint can send the summary instead. Nothing is sent differently
   * before then. False when the result is not in the view.
   */
  attachCompactSummary(callId: string, summary: string): boolean {
    const core = this.#core;
    const index = toolResultIndex(core.state.view, callId);
    if (index < 0) return false;
    core.state.view = core.state.view.with(
      index,
      withCompactSummary(core.state.view[index]!, callId, summary),
    );
    return true;
  }

  /**
   * Call with the provider's reported prompt tokens (`usage.input`, cached ones included) of a request this
   * governor prepared: later decisions are anchored on that truth, and only the change since is estimated.
   */
  observeUsage(prepared: RequestTokens, reportedInputTokens: number): void {
    const core = this.#core;
    const anchor = core.usage();
    anchor.observe(prepared.total, reportedInputTokens);
    core.state.usage = anchor.state;
  }

  /**
   * Everything this governor carries to the next request, as a plain value to persist beside the session (see
   * `GovernorState`): a governor given it back with `restore` after a restart prepares exactly what this one
   * would have.
   */
  snapshot(): GovernorState {
    const core = this.#core;
    return {
      ...persistedGovernorState(core.state, (message) => core.unchanged.has(message)),
      reuse: core.reuse.counts(),
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
    const core = this.#core;
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
    for (const [index, entry] of state.view.entries()) if ("id" in entry) core.unchanged.add(view[index]!);
    core.state = {
      view,
      covered,
      lastCoveredId: state.lastCoveredId,
      requests: state.requests,
      emergencyStage: state.emergencyStage,
      piled: restoredPiled(state.piled),
      usage: state.usage === undefined ? undefined : { ...state.usage },
      guard: copyGuard(state.guard),
      recentCalls: [...core.loopDetector(state.recentCalls).recentCalls],
      cached: state.cached,
      anchor: state.anchor,
    };
    const originalsById = new Map(originals.map((message) => [message.id, message]));
    core.reuse = SessionReuse.resume(
      state.reuse,
      history,
      covered,
      (id) => byId.get(id) ?? originalsById.get(id),
    );
    core.reuseRates = core.learnedRates();
    return true;
  }

  /** Call after a successful model response: ends an emergency sequence. */
  recordSuccess(): void {
    const core = this.#core;
    core.state.emergencyStage = 0;
  }
}

/**
 * The cache anchors of the view just settled (see `GovernedRequest.cacheAnchors`): its own, preceded by the
 * previous request's when a checkpoint rewrote history after it (that prefix is what the provider holds; the
 * new anchor is written by this request, for the next).
 */
function nextAnchors(core: GovernorCore, previousView: readonly Message[], checkpoint: boolean): number[] {
  const own = core.cacheAnchors.anchor(core.state.view, core.schedule.inputsAbove, core.tokensOf);
  const anchors = own === undefined ? [] : [own];
  const previous = core.state.anchor;
  if (!checkpoint || previous === undefined || previous === own) return anchors;
  for (let index = 0; index <= previous; index++)
    if (core.state.view[index] !== previousView[index]) return anchors;
  return [previous, ...anchors].sort((a, b) => a - b);
}

/**
 * Creates a governor for one session.
 *
 * @example
 * const governor = createGovernor({ contextWindow: 128_000, counter, summarizer, pipeline: preset("aggressive") });
 */
export function createGovernor(options: GovernorOptions): Governor {
  return new Governor(options);
}
