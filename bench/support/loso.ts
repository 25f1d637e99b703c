// Leave-one-session-out choice of ctxkit's settings: for each session, the candidate settings are judged on the
// other sessions only, and the session is scored with the candidate chosen there — as a session ctxkit has never
// seen would be. The reuse rates and their weight are held out the same way (heldOut in policies.bench.ts).
import { standing, type FrontierPoint } from "./frontier.ts";
import type { BenchProvider, PolicyRun } from "./policy-runs.ts";

/** One candidate's runs, one per session (same order for every candidate). */
export type CandidateRuns = readonly Readonly<Record<BenchProvider, PolicyRun>>[];

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

/** Per session, per pricing: the cost of the cheapest peer that keeps the goal there. */
export type CostCeilings = readonly Readonly<Record<BenchProvider, number>>[];

/** `runs` pooled over the sessions `include` selects, as the frontier compares policies. */
function pointOf(
  runs: CandidateRuns,
  providers: readonly BenchProvider[],
  include: (session: number) => boolean,
): FrontierPoint {
  const figures = providers.map((provider) => [provider, pooled(runs, provider, include)] as const);
  const by = (pick: (of: Pooled) => number) =>
    Object.fromEntries(figures.map(([provider, of]) => [provider, pick(of)])) as Record<
      BenchProvider,
      number
    >;
  return {
    name: "",
    cost: by((of) => of.cost),
    grounding: by((of) => of.grounding),
    anchors: by((of) => of.anchors),
  };
}

/**
 * The candidate chosen for `session` without it, by the goal "dominate, don't trade" (issue 32): the one that
 * dominates the most `peers` pooled over the other sessions — costs no more and keeps no less strict grounding and
 * no fewer strict anchors, as the tables print them (`standing`), under every pricing. On a tie the default
 * (candidate 0) stays, unless a tied candidate dominates it there too (then the cheapest of those, summed over
 * pricings): cost is already one of the axes a candidate is judged on, so a change must earn its place by
 * standing, not by a saving too small to print. Without the default among the tied, the cheapest.
 */
export function dominatingWithout(
  candidates: readonly CandidateRuns[],
  peers: readonly CandidateRuns[],
  session: number,
  providers: readonly BenchProvider[],
): number {
  const others = (index: number) => index !== session;
  const peerPoints = peers.map((runs) => pointOf(runs, providers, others));
  const points = candidates.map((runs) => pointOf(runs, providers, others));
  const dominates = (own: FrontierPoint, other: FrontierPoint) =>
    providers.every((provider) => standing(own, other, provider) === "ctxkit dominates");
  const counts = points.map((own) => peerPoints.filter((peer) => dominates(own, peer)).length);
  const most = Math.max(...counts);
  const tied = counts.flatMap((count, index) => (count === most ? [index] : []));
  const cost = (index: number) =>
    providers.reduce((total, provider) => total + points[index]!.cost[provider], 0);
  const cheapest = (indices: readonly number[]) =>
    indices.reduce((best, index) => (cost(index) < cost(best) ? index : best));
  if (!tied.includes(0)) return cheapest(tied);
  const better = tied.filter((index) => index !== 0 && dominates(points[index]!, points[0]!));
  return better.length > 0 ? cheapest(better) : 0;
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
