import { ContextOverflowError } from "../errors/errors.ts";
import type { Message } from "../model/message.ts";
import { checkpointPays, expectedRemainingRequests, requestsUntilDue } from "./cache-economics.ts";
import type { GovernanceEvent } from "./events.ts";
import type { GovernorCore } from "./governor-core.ts";
import { governancePricing } from "./governor-settings.ts";
import { fitToWindow, type WindowMeasure } from "./overflow-fit.ts";
import { runPipeline, sumTokens } from "./processor.ts";

/**
 * Whether to consider an optional checkpoint: the cache expired, enough history came since the newest summary to
 * summarise some of it, or enough tool traffic piled up outside the protection window for a batch.
 */
export function optionalCandidate(core: GovernorCore): boolean {
  // The cache expired since the last request: this one writes everything anyway, so a rewrite is free.
  if (core.cacheExpired()) return true;
  const { piled } = core.state;
  // The last optional checkpoint paid but was not yet worth its rewrite: not before it would be.
  if (piled.dueAt !== undefined && core.state.requests < piled.dueAt) return false;
  const { protect, minPrunable } = core.thresholds();
  const unsettled = core.viewFigures.unsettledTokens;
  if (
    core.schedule.settledHistory &&
    unsettled >= piled.nextSettledCheckAt &&
    unsettled >= protect + minPrunable
  )
    return true;
  const piledTokens = piled.toolTokens + piled.inputTokens;
  if (piledTokens < piled.nextCheckAt) return false;
  const prunable = piledTokens - protect;
  const usable = core.counterWindow().usable;
  return core.schedule.toolOutput.some(
    ({ tokens, windowShare }) =>
      prunable >= (windowShare === undefined ? tokens : Math.min(tokens, Math.floor(usable * windowShare))),
  );
}

/**
 * Runs the checkpoint fold over the view and settles it: an optional checkpoint that does not pay for its cache
 * rewrite is thrown away (and the next check postponed); a result that would still overflow is fitted to the
 * window (`fitToWindow`) or refused with `ContextOverflowError` when pre-flight is on. True when the view changed.
 */
export async function takeCheckpoint(
  core: GovernorCore,
  fixed: number,
  mandatory: boolean,
  publish: (event: GovernanceEvent) => void,
  announce: (event: GovernanceEvent) => void,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  const pending: GovernanceEvent[] = [];
  // A compaction's start is told to listeners as it happens (a UI shows it while the summarizer runs); the rest
  // waits until the checkpoint is decided, since a fold that does not pay is thrown away.
  const emit = (event: GovernanceEvent) => {
    pending.push(event);
    if (event.type === "compaction-start") announce(event);
  };
  const current = core.state.view;
  let next = await runPipeline(core.schedule.fold, current, core.context(fixed, false, emit, signal));
  const decision =
    !mandatory && core.settings.cacheAware && next !== current ? pays(core, next) : { pays: true, dueIn: 0 };
  if (!decision.pays) {
    core.postponeOptionalCheck(decision.dueIn);
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
      tokensBefore: core.anchored(fixed, core.viewFigures.tokens),
      tokensAfter: core.anchored(fixed, sumTokens(next, core.tokensOf)),
      messageIds: [],
    });
    return false;
  }
  const { window } = core;
  const required = (view: readonly Message[]) =>
    core.anchored(fixed, core.sent(view).tokens) + window.reservedOutput;
  if (core.settings.preflight && required(next) > window.contextWindow) {
    const forced = core.context(fixed, true, (event) => pending.push(event), signal);
    const fitted = await fitToWindow(next, core.schedule.onOverflow, forced, measure(core, fixed), pending);
    next = fitted.view;
    if (required(next) > window.contextWindow) {
      for (const event of pending) publish(event);
      core.commit(next);
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
      tokensBefore: core.anchored(fixed, core.viewFigures.tokens),
      tokensAfter: required(next) - window.reservedOutput,
      messageIds: fitted.dropped,
    });
  }
  for (const event of pending) publish(event);
  if (next === current) {
    // Nothing was worth doing: without this, every request would re-run the pipeline over the whole view.
    if (!mandatory) core.postponeOptionalCheck();
    return false;
  }
  core.commit(next);
  return true;
}

/**
 * Whether an optional checkpoint to `next` saves more than rewriting the cached prefix costs and is due
 * (`checkpointPays`), and if it pays but is not yet due, in how many requests it would be.
 */
function pays(core: GovernorCore, next: readonly Message[]): { pays: boolean; dueIn: number } {
  const current = core.state.view;
  const firstChange = next.findIndex((message, index) => message !== current[index]);
  const start = core.rewriteStart(firstChange < 0 ? next.length : firstChange);
  // What the rewrite writes to the cache that the next request would otherwise read from it.
  const rewritten =
    start === undefined ? 0 : Math.max(0, sumTokens(next.slice(start), core.tokensOf) - core.freshTokens);
  const checkpoint = {
    savedTokens: core.viewFigures.tokens - sumTokens(next, core.tokensOf),
    rewrittenTokens: rewritten,
    remainingRequests: expectedRemainingRequests(core.state.requests),
    requestsSinceLast: core.state.requests - core.state.piled.since,
  };
  const pricing = governancePricing(core.settings);
  return { pays: checkpointPays(checkpoint, pricing), dueIn: requestsUntilDue(checkpoint, pricing) };
}

/** How `fitToWindow` measures views for a payload of `fixed` tokens besides the messages. */
function measure(core: GovernorCore, fixed: number): WindowMeasure {
  const { window } = core;
  return {
    fits: (view) =>
      core.anchored(fixed, core.sent(view).tokens) + window.reservedOutput <= window.contextWindow,
    // The anchored usable window less the fixed tokens and what orphan repair will add, in the counter's tokens.
    budget: (view) =>
      core.usage().countedLimit(window.usable) -
      fixed -
      (core.sent(view).tokens - sumTokens(view, core.tokensOf)),
  };
}
