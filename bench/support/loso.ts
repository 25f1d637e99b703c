// Leave-one-session-out choice of ctxkit's settings: for each session, the candidate settings are judged on the
// other sessions only, and the session is scored with the candidate chosen there — as a session ctxkit has never
// seen would be. The reuse rates and their weight are held out the same way (heldOut in policies.bench.ts).
import type { BenchProvider, PolicyRun } from "./policy-runs.ts";

/** One candidate's runs, one per session (same order for every candidate). */
export type CandidateRuns = readonly Readonly<Record<BenchProvider, PolicyRun>>[];

/** The targets a candidate must reach on the sessions it is judged on, under every provider's pricing. */
export interface SelectionGoal {
  readonly grounding: number;
  readonly anchors: number;
}

/** Pooled figures of some sessions' runs under one pricing. */
export interface Pooled {
  /** Mean over sessions of the per-session (strict) grounding. */
  readonly grounding: number;
  /** Strictly kept edit anchors over all anchors (1 when there were none). */
  readonly anchors: number;
  /** Headline cost (with summaries and re-reads), summed. */
  readonly cost: number;
}

/** Pools the runs of the sessions `include` selects, for one provider. */
export function pooled(
  runs: CandidateRuns,
  provider: BenchProvider,
  include: (session: number) => boolean = () => true,
): Pooled {
  let grounding = 0;
  let sessions = 0;
  let anchors = 0;
  let anchorsKept = 0;
  let cost = 0;
  for (const [session, run] of runs.entries()) {
    if (!include(session)) continue;
    const of = run[provider];
    sessions++;
    grounding += of.grounding.mean;
    anchors += of.grounding.anchors;
    anchorsKept += of.grounding.anchorsKept;
    cost += of.withRereads;
  }
  return {
    grounding: sessions === 0 ? 1 : grounding / sessions,
    anchors: anchors === 0 ? 1 : anchorsKept / anchors,
    cost,
  };
}

/** Per session, per pricing: the cost a candidate may reach there (the cheapest peer that reaches the goal). */
export type CostCeilings = readonly Readonly<Record<BenchProvider, number>>[];

/** True when `run` reaches `goal` on its session: strict grounding and edit anchors (1 without anchors). */
function reaches(run: PolicyRun, goal: SelectionGoal): boolean {
  const anchors = run.grounding.anchors === 0 ? 1 : run.grounding.anchorsKept / run.grounding.anchors;
  return run.grounding.mean >= goal.grounding && anchors >= goal.anchors;
}

/**
 * The candidate chosen for `session` without it, by the goal as it is judged, session by session: the one that
 * reaches `goal` — under every pricing, at a cost no higher than that session's ceiling (`ceilings`, when given) —
 * on the most other sessions; among those, the cheapest on the others (summed over pricings). A rule that pooled
 * the sessions would let a few sessions that keep everything hide the ones that do not.
 */
export function chooseWithout(
  candidates: readonly CandidateRuns[],
  session: number,
  goal: SelectionGoal,
  providers: readonly BenchProvider[],
  ceilings?: CostCeilings,
): number {
  const others = (index: number) => index !== session;
  let best = 0;
  let bestMet = -1;
  let bestCost = Number.POSITIVE_INFINITY;
  for (const [index, runs] of candidates.entries()) {
    let met = 0;
    for (const [other, run] of runs.entries()) {
      if (!others(other)) continue;
      const ok = providers.every(
        (provider) =>
          reaches(run[provider], goal) &&
          run[provider].withRereads <= (ceilings?.[other]?.[provider] ?? Number.POSITIVE_INFINITY),
      );
      if (ok) met++;
    }
    const cost = providers.reduce((total, provider) => total + pooled(runs, provider, others).cost, 0);
    if (met > bestMet || (met === bestMet && cost < bestCost)) {
      best = index;
      bestMet = met;
      bestCost = cost;
    }
  }
  return best;
}

/**
 * The candidate chosen for `session` without it when there is no absolute target to reach (the stress windows,
 * where the goal is relative to the peers): the one whose weakest pooled figure on the other sessions — strict
 * grounding or anchors, any pricing — is highest; the cheaper (summed over pricings) on a tie.
 */
export function bestWithout(
  candidates: readonly CandidateRuns[],
  session: number,
  providers: readonly BenchProvider[],
): number {
  const others = (index: number) => index !== session;
  let best = 0;
  let bestScore = Number.NEGATIVE_INFINITY;
  let bestCost = Number.POSITIVE_INFINITY;
  for (const [index, runs] of candidates.entries()) {
    const figures = providers.map((provider) => pooled(runs, provider, others));
    const score = Math.min(...figures.flatMap((of) => [of.grounding, of.anchors]));
    const cost = figures.reduce((total, of) => total + of.cost, 0);
    if (score > bestScore || (score === bestScore && cost < bestCost)) {
      best = index;
      bestScore = score;
      bestCost = cost;
    }
  }
  return best;
}
