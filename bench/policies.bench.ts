// Section 4: cost and next-step grounding on real transcripts — no governance, ctxkit's presets and the peers,
// priced the way providers bill (prompt-cache model with breakpoints and expiry, summaries billed, re-reads of
// what the agent used next) at each peer's real window, and all at one common window beside it.
import { writeFile } from "node:fs/promises";
import { importTranscriptFile } from "../src/formats/transcripts/index.ts";
import { cacheProfileFor, cacheProfiles } from "../src/pricing/cache-profile.ts";
import { recordedSpend } from "../src/replay/replay.ts";
import { createExactCounter } from "../src/tokens/exact-counter.ts";
import { transcriptFiles, transcriptName } from "../test/support/transcripts.ts";
import type { BenchSection } from "./run.ts";
import { benchPolicies, ctxkitPreset, type BenchPolicy, type BenchPreset } from "./policies/index.ts";
import type { PresetOptionsInput } from "../src/governance/preset-options.ts";
import { createExtractiveSummarizer } from "../src/summarize/index.ts";
import type { TokenCounter } from "../src/tokens/token-counter.ts";
import { calibrateCache, type CacheCalibration } from "./support/cache-calibration.ts";
import { DEFAULT_REUSE_RATES, DEFAULT_REUSE_RATES_WEIGHT } from "../src/governance/reuse-rates.ts";
import type { ContextKind } from "../src/metrics/context-kind.ts";
import {
  AGE_BUCKETS,
  countReuse,
  emptyReuseCounts,
  fittedReuseRates,
  reuseRates,
  reuseRatesWeight,
  withoutCounts,
  type ReuseCounts,
} from "./support/reuse-rates.ts";
import { summaryCoverage } from "./support/summary-coverage.ts";
import {
  agentOf,
  conversationIndex,
  recordedWindow,
  sharedCorpus,
  type CorpusConversation,
} from "./support/corpus.ts";
import { PROVIDERS, type BenchProvider, type PolicyRun } from "./support/policy-runs.ts";
import { runJobs, workerCount, type PolicyJob } from "./support/policy-pool.ts";
import { bestWithout, dominatingWithout, type CostCeilings } from "./support/loso.ts";
import { frontierRows, type FrontierPoint } from "./support/frontier.ts";
import { markdownTable } from "./support/stats.ts";
import { lineChart } from "./support/svg-chart.ts";

const SAME_WINDOW = 128_000;
/** Windows smaller than the sessions' histories: every policy on every session whose history exceeds one. */
const STRESS_WINDOWS = [64_000, 32_000] as const;
/** A transcript is long enough to govern when its history reaches this many tokens over this many requests. */
const MIN_TOKENS = 10_000;
const MIN_REQUESTS = 10;
const CHART = "charts/policies-longest-session.svg";

type Runs = Record<BenchProvider, PolicyRun>;

const k = (value: number) => `${(value / 1000).toFixed(value >= 100_000 ? 0 : 1)}k`;
const pct = (value: number) => `${(value * 100).toFixed(1)}%`;
/** A share per provider's replay: one figure when both are the same, else "Anthropic / OpenAI". */
const byProvider = (values: Record<BenchProvider, number>) =>
  pct(values.anthropic) === pct(values.openai)
    ? pct(values.anthropic)
    : `${pct(values.anthropic)} / ${pct(values.openai)}`;
const windowLabel = (tokens: number) =>
  tokens >= 1_000_000 ? `${Math.round(tokens / 1_048_576)}M` : k(tokens);

function realWindow(policy: BenchPolicy, entry: CorpusConversation): number {
  if (policy.window === "recorded") return recordedWindow(entry);
  if (typeof policy.window === "number") return policy.window;
  const recorded = recordedWindow(entry);
  return entry.conversation.format === "claude-code" && recorded > policy.window.longContext
    ? recorded
    : policy.window.longContext;
}

/** Totals of one policy over the corpus. */
interface Total {
  readonly name: string;
  readonly windows: string;
  readonly cost: Record<BenchProvider, { asRun: number; withSummaries: number; withRereads: number }>;
  /**
   * Mean over transcripts of the per-transcript mean grounding (requests whose reply copied something), in the
   * replay priced by each provider (ctxkit decides by the provider's prices, so its views differ between them).
   */
  readonly grounding: Record<BenchProvider, number>;
  /** The same with every request over the window keeping nothing (the provider would refuse it). */
  readonly inWindowGrounding: Record<BenchProvider, number>;
  /** Share of the edit anchors still in view, per provider's replay. */
  readonly anchors: Record<BenchProvider, number>;
  /** The lenient figures: spans in text governance wrote (summaries, previews, outlines) count too. */
  readonly lenientGrounding: Record<BenchProvider, number>;
  readonly lenientAnchors: Record<BenchProvider, number>;
  readonly anchorsSeen: number;
  /** The lowest per-request grounding on any transcript (Anthropic-priced replay, as the columns after it). */
  readonly worst: number;
  readonly retention: number;
  readonly peak: number;
  readonly overWindow: number;
  readonly compactions: number;
  readonly summaryCalls: number;
  readonly rereads: number;
}

function totalOf(name: string, runs: readonly Runs[], windows: readonly number[]): Total {
  const sum = (pick: (runs: Runs) => number) => runs.reduce((total, run) => total + pick(run), 0);
  const cost = {} as Total["cost"];
  for (const provider of PROVIDERS)
    cost[provider] = {
      asRun: sum((run) => run[provider].asRun),
      withSummaries: sum((run) => run[provider].withSummaries),
      withRereads: sum((run) => run[provider].withRereads),
    };
  const anthropic = runs.map((run) => run.anthropic);
  const anchorsSeen = anthropic.reduce((total, run) => total + run.grounding.anchors, 0);
  const distinct = [...new Set(windows)].sort((a, b) => a - b);
  const grounding = {} as Total["grounding"];
  const inWindowGrounding = {} as Total["inWindowGrounding"];
  const anchors = {} as Total["anchors"];
  const lenientGrounding = {} as Total["lenientGrounding"];
  const lenientAnchors = {} as Total["lenientAnchors"];
  for (const provider of PROVIDERS) {
    const of = runs.map((run) => run[provider].grounding);
    const seen = Math.max(
      1,
      of.reduce((total, run) => total + run.anchors, 0),
    );
    grounding[provider] = of.reduce((total, run) => total + run.mean, 0) / of.length;
    inWindowGrounding[provider] =
      runs.reduce((total, run) => total + run[provider].inWindowGrounding, 0) / runs.length;
    lenientGrounding[provider] = of.reduce((total, run) => total + run.lenientMean, 0) / of.length;
    anchors[provider] = of.reduce((total, run) => total + run.anchorsKept, 0) / seen;
    lenientAnchors[provider] = of.reduce((total, run) => total + run.lenientAnchorsKept, 0) / seen;
  }
  return {
    name,
    windows: distinct.map(windowLabel).join(" / "),
    cost,
    grounding,
    inWindowGrounding,
    anchors,
    lenientGrounding,
    lenientAnchors,
    anchorsSeen,
    worst: Math.min(...anthropic.map((run) => run.grounding.worst?.score ?? 1)),
    retention: anthropic.reduce((total, run) => total + run.retention, 0) / anthropic.length,
    peak: Math.max(...anthropic.map((run) => run.peak)),
    overWindow: anthropic.reduce((total, run) => total + run.overWindow, 0),
    compactions: anthropic.reduce((total, run) => total + run.compactions, 0),
    summaryCalls: anthropic.reduce((total, run) => total + run.summaryCalls, 0),
    rereads: anthropic.reduce((total, run) => total + run.rereads, 0),
  };
}

/** A policy for one session, set per job: ctxkit's own with the reuse rates and weight held out, else undefined. */
type PolicyFor = (policy: BenchPolicy, entry: CorpusConversation) => BenchPreset | undefined;

/**
 * ctxkit's policies with their reuse rates and weight measured on the other sessions (the peers unchanged); a
 * candidate that sets the weight itself keeps it.
 */
const heldOutCtxkit: PolicyFor = (policy, entry) =>
  policy.kind === "governor" && policy.preset !== undefined
    ? { name: policy.preset.name, options: { ...heldOutPolicy(entry), ...policy.preset.options } }
    : undefined;

/**
 * Replays every policy of `policies` over every session of `corpus` (those `window` gives a window), on the
 * worker pool: `runs[policy][session]`, `undefined` where the session was left out. `room` is the window the
 * policies share on a session (`RunOptions.fixedRoom`); by default none: at real windows every policy carries the
 * system prompt and tools the recorded agent sent.
 */
async function replayAll(
  all: readonly CorpusConversation[],
  corpus: readonly CorpusConversation[],
  policies: readonly BenchPolicy[],
  window: (policy: BenchPolicy, entry: CorpusConversation) => number | undefined,
  label: string,
  policyFor: PolicyFor = () => undefined,
  room: (entry: CorpusConversation) => number = () => Number.POSITIVE_INFINITY,
): Promise<{ runs: (Runs | undefined)[][]; windows: number[][] }> {
  const jobs: PolicyJob[] = [];
  const slots: { policy: number; session: number }[] = [];
  const windows: number[][] = policies.map(() => []);
  for (const [policyIndex, policy] of policies.entries())
    for (const [session, entry] of corpus.entries()) {
      const tokens = window(policy, entry);
      if (tokens === undefined) continue;
      windows[policyIndex]!.push(tokens);
      const override = policyFor(policy, entry);
      jobs.push({
        session: entry.name,
        conversation: conversationIndex(all, entry),
        policyName: policy.name,
        ...(override !== undefined && { preset: override }),
        window: tokens,
        fixedRoom: room(entry),
        asRun: false,
        weight: entry.tokens * (policy.kind === "governor" && policy.ctxkit === true ? 2 : 1),
      });
      slots.push({ policy: policyIndex, session });
    }
  const begun = Date.now();
  const results = await runJobs(jobs, (_, done) => {
    if (done % 20 === 0 || done === jobs.length)
      process.stderr.write(
        `  ${label}: ${done}/${jobs.length} in ${((Date.now() - begun) / 1000).toFixed(0)} s\n`,
      );
  });
  const runs: (Runs | undefined)[][] = policies.map(() => corpus.map(() => undefined));
  for (const [index, slot] of slots.entries()) runs[slot.policy]![slot.session] = results[index];
  return { runs, windows };
}

/** The runs that exist (sessions a window left out dropped). */
const present = (runs: readonly (Runs | undefined)[]) => runs.filter((run): run is Runs => run !== undefined);

function costTable(totals: readonly Total[]): string {
  return markdownTable(
    [
      "policy (all transcripts)",
      "window",
      "Anthropic: as run",
      "+ LLM summaries",
      "**+ re-reads**",
      "OpenAI: as run",
      "+ LLM summaries",
      "**+ re-reads**",
      "summaries",
      "re-reads",
    ],
    totals.map((total) => [
      total.name,
      total.windows,
      k(total.cost.anthropic.asRun),
      k(total.cost.anthropic.withSummaries),
      `**${k(total.cost.anthropic.withRereads)}**`,
      k(total.cost.openai.asRun),
      k(total.cost.openai.withSummaries),
      `**${k(total.cost.openai.withRereads)}**`,
      total.summaryCalls,
      total.rereads,
    ]),
  );
}

function qualityTable(totals: readonly Total[]): string {
  return markdownTable(
    [
      "policy (all transcripts)",
      "**next-step grounding** (strict; Anthropic / OpenAI runs when they differ)",
      "**edit anchors in view** (strict)",
      "lenient: grounding / anchors (summaries, previews count)",
      "worst request",
      "peak context",
      "requests over window",
      "compactions",
      "keyword retention",
    ],
    totals.map((total) => [
      total.name,
      `**${byProvider(total.grounding)}**`,
      `**${byProvider(total.anchors)}** of ${total.anchorsSeen}`,
      `${byProvider(total.lenientGrounding)} / ${byProvider(total.lenientAnchors)}`,
      pct(total.worst),
      k(total.peak),
      total.overWindow,
      total.compactions,
      pct(total.retention),
    ]),
  );
}

const providerName = (provider: BenchProvider) => (provider === "anthropic" ? "Anthropic" : "OpenAI");

/** The peers among `totals` (not ctxkit's, not no governance). */
const peersOf = (totals: readonly Total[]) =>
  totals.filter((total) => !total.name.startsWith("ctxkit") && total.name !== "no governance");

function verdicts(totals: readonly Total[], ctxkitName = "ctxkit default"): string[] {
  const ctxkit = totals.find((total) => total.name === ctxkitName)!;
  const others = peersOf(totals);
  const lines: string[] = [];
  for (const provider of PROVIDERS) {
    const sorted = [...totals].sort((a, b) => a.cost[provider].withRereads - b.cost[provider].withRereads);
    const rank = sorted.indexOf(ctxkit) + 1;
    const cheapestPeer = [...others].sort(
      (a, b) => a.cost[provider].withRereads - b.cost[provider].withRereads,
    )[0]!;
    const gap = ctxkit.cost[provider].withRereads / cheapestPeer.cost[provider].withRereads - 1;
    lines.push(
      `${providerName(provider)} caching, cost with LLM summaries and re-reads: ${ctxkit.name} ` +
        `${k(ctxkit.cost[provider].withRereads)} (rank ${rank} of ${totals.length}); cheapest peer ` +
        `${cheapestPeer.name} ${k(cheapestPeer.cost[provider].withRereads)} — ctxkit is ` +
        `${gap <= 0 ? `${pct(-gap)} cheaper` : `**${pct(gap)} costlier**`}.`,
    );
  }
  const best = (pick: (total: Total) => number) => Math.max(...others.map(pick));
  const goal = (values: Record<BenchProvider, number>, target: number) => {
    const missed = PROVIDERS.filter((provider) => values[provider] < target);
    return missed.length === 0
      ? "met in both runs"
      : `**not met** in the ${missed.map(providerName).join(" and ")}-priced run`;
  };
  lines.push(
    `Strict grounding (Anthropic / OpenAI-priced runs): ${ctxkit.name} ${pct(ctxkit.grounding.anthropic)} / ` +
      `${pct(ctxkit.grounding.openai)} (goal ≥ 99.0%: ${goal(ctxkit.grounding, 0.99)}), edit anchors ` +
      `${pct(ctxkit.anchors.anthropic)} / ${pct(ctxkit.anchors.openai)} (goal ≥ 99.0%: ${goal(ctxkit.anchors, 0.99)}); ` +
      `best peer ${pct(best((total) => total.grounding.anthropic))} / ` +
      `${pct(best((total) => total.anchors.anthropic))} (a peer decides the same way under both prices).`,
  );
  return lines;
}

/**
 * The stress-window verdict: ctxkit's grounding against the best peer's, and its cost against the cheapest
 * peer that reaches 0.95 grounding, per pricing; judged by `figure` (strict grounding as sent, or with the
 * requests over the window refused), named `yardstick`.
 */
function stressVerdicts(
  totals: readonly Total[],
  figure: (total: Total) => Record<BenchProvider, number>,
  yardstick: string,
): string[] {
  const ctxkit = totals.find((total) => total.name === CROSS_VALIDATED)!;
  const others = peersOf(totals);
  return PROVIDERS.map((provider) => {
    const grounding = (total: Total) => figure(total)[provider];
    const bestPeer = [...others].sort((a, b) => grounding(b) - grounding(a))[0]!;
    const reaching = others
      .filter((total) => grounding(total) >= 0.95)
      .sort((a, b) => a.cost[provider].withRereads - b.cost[provider].withRereads)[0];
    const groundingMet = grounding(ctxkit) >= grounding(bestPeer);
    const cost = ctxkit.cost[provider].withRereads;
    const costText =
      reaching === undefined
        ? "no peer reaches 95% grounding"
        : `${k(cost)} against ${reaching.name}'s ${k(reaching.cost[provider].withRereads)}, the cheapest peer ` +
          `reaching 95% (${cost <= reaching.cost[provider].withRereads ? "met" : "**not met**"})`;
    return (
      `${yardstick}, ${providerName(provider)}-priced: ${ctxkit.name} grounding ${pct(grounding(ctxkit))}, anchors ` +
      `${pct(ctxkit.anchors[provider])}; best peer ${bestPeer.name} ${pct(grounding(bestPeer))} ` +
      `(${groundingMet ? "met" : "**not met**"}); cost ${costText}.`
    );
  });
}

/**
 * Where ctxkit stands against each peer (dominates, is dominated, or trades cost for what it keeps), per pricing,
 * on cost with re-reads and the strict figures `quality` picks (as sent, or with over-window requests refused).
 */
function frontierTable(
  totals: readonly Total[],
  ctxkitName: string,
  quality: (total: Total) => Record<BenchProvider, number> = (total) => total.grounding,
): string {
  const pointOf = (total: Total): FrontierPoint => ({
    name: total.name,
    cost: { anthropic: total.cost.anthropic.withRereads, openai: total.cost.openai.withRereads },
    grounding: quality(total),
    anchors: total.anchors,
  });
  const ctxkit = pointOf(totals.find((total) => total.name === ctxkitName)!);
  return markdownTable(
    [
      `${ctxkitName} against (cost · grounding · anchors, in % and points)`,
      ...PROVIDERS.map((provider) => `${providerName(provider)}-priced`),
    ],
    frontierRows(ctxkit, peersOf(totals).map(pointOf), PROVIDERS),
  );
}

/** A weight that keeps the reuse rates fixed: no session counts that many replies. */
const FIXED = 1e12;

/**
 * The settings cross-validation chooses among for each session (each with the reuse rates and weight held out):
 * the default, lower grounding targets (0.995 was the default until cross-validation by dominance, with 0.9995 among
 * the candidates, chose 0.9995 in every fold), the corpus's reuse rates not blended with the session's own, no
 * elision of older tool inputs, an earlier compaction trigger (the default before cross-validation chose 0.9 at every
 * stress window), a larger tail kept verbatim at compaction, and the needed pieces held to the tail's share (the
 * rule before `neededShare`) or given half the window (what decides under window pressure: the stress windows
 * choose among the same candidates; docs/policy.md).
 */
const CANDIDATES: readonly { readonly label: string; readonly policy: PresetOptionsInput }[] = [
  { label: "default", policy: {} },
  { label: "groundingTarget 0.98", policy: { groundingTarget: 0.98 } },
  { label: "groundingTarget 0.995", policy: { groundingTarget: 0.995 } },
  { label: "groundingTarget 0.998", policy: { groundingTarget: 0.998 } },
  { label: "reuse rates fixed", policy: { reuseRatesWeight: FIXED } },
  { label: "elideToolInputsAbove 0", policy: { elideToolInputsAbove: 0 } },
  { label: "compactionTrigger 0.8", policy: { compactionTrigger: 0.8 } },
  { label: "tailShare 0.3", policy: { tailShare: 0.3 } },
  { label: "neededShare 0", policy: { neededShare: 0 } },
  { label: "neededShare 0.5", policy: { neededShare: 0.5 } },
];

/** The candidates as bench policies (ctxkit's default preset with each candidate's settings). */
const candidatePolicies: readonly BenchPolicy[] = CANDIDATES.map((candidate) => ({
  kind: "governor",
  name: `ctxkit ${candidate.label}`,
  ...ctxkitPreset("default", candidate.policy),
  ctxkit: true,
  window: "recorded",
}));

/** The goal every figure is judged by, and cross-validation chooses by: strict grounding and anchors. */
const GOAL = { grounding: 0.99, anchors: 0.99 } as const;

/** Each candidate replayed over the corpus at the recorded agents' windows, reuse rates held out. */
async function candidateRuns(
  all: readonly CorpusConversation[],
  corpus: readonly CorpusConversation[],
): Promise<Runs[][]> {
  const { runs } = await replayAll(
    all,
    corpus,
    candidatePolicies,
    (_, entry) => recordedWindow(entry),
    "cross-validation candidates",
    heldOutCtxkit,
  );
  return runs.map((row) => present(row));
}

/** What each candidate buys, every session held out (reuse rates and weight measured without it). */
function candidatesTable(candidates: readonly Runs[][], windows: readonly number[]): string {
  const totals = candidates.map((runs, index) => totalOf(CANDIDATES[index]!.label, runs, windows));
  const base = totals[0]!;
  const change = (value: number, of: number) =>
    value === of ? "" : ` (${value > of ? "+" : ""}${pct(value / of - 1)})`;
  return markdownTable(
    [
      "ctxkit default with (reuse rates held out)",
      "cost with re-reads, Anthropic",
      "OpenAI",
      "strict grounding",
      "strict edit anchors",
    ],
    totals.map((total) => [
      total.name,
      `${k(total.cost.anthropic.withRereads)}${change(total.cost.anthropic.withRereads, base.cost.anthropic.withRereads)}`,
      `${k(total.cost.openai.withRereads)}${change(total.cost.openai.withRereads, base.cost.openai.withRereads)}`,
      byProvider(total.grounding),
      byProvider(total.anchors),
    ]),
  );
}

/** Whether `run` keeps the goal's strict grounding and edit anchors on its session. */
function keepsGoal(run: PolicyRun): boolean {
  const anchors = run.grounding.anchors === 0 ? 1 : run.grounding.anchorsKept / run.grounding.anchors;
  return run.grounding.mean >= GOAL.grounding && anchors >= GOAL.anchors;
}

/**
 * Per session and pricing, the cost of the cheapest peer that keeps the goal there (infinite when none does): what
 * a user who wants that much kept would otherwise pay.
 */
function keepingCeilings(peers: readonly (readonly Runs[])[], sessions: number): CostCeilings {
  return Array.from({ length: sessions }, (_, session) => {
    const ceiling = (provider: BenchProvider) =>
      Math.min(
        Number.POSITIVE_INFINITY,
        ...peers
          .map((runs) => runs[session]![provider])
          .filter(keepsGoal)
          .map((run) => run.withRereads),
      );
    return { anthropic: ceiling("anthropic"), openai: ceiling("openai") };
  });
}

/**
 * The cross-validated ctxkit: each session scored with the candidate chosen on the others — the one that dominates
 * the most peers pooled over them; on a tie the default, unless a tied candidate dominates it (`dominatingWithout`:
 * the goal is to dominate, not to trade). (Until 3 December 2026 evening a tie went to the cheapest: one fold,
 * entireio b8, took the fixed rates for a saving too small to print and kept 99.4% of that session's anchors. The
 * rule before that, the cheapest candidate keeping strict grounding and anchors ≥ 99% pooled over the
 * others, chose groundingTarget 0.995 in every fold: 6.0% / 6.3% cheaper, and dominating 3 / 2 peers instead of
 * 4 / 3. Choosing the candidate that keeps the goal within the cheapest keeping peer's cost on the most other
 * sessions was tried before that: it chose no elision for 23 of 27 sessions, met the per-session goal on one more
 * session, and cost 2.3% more pooled for the same grounding.)
 */
function crossValidated(
  candidates: readonly Runs[][],
  peers: readonly (readonly Runs[])[],
): { runs: Runs[]; picks: number[] } {
  const picks = candidates[0]!.map((_, session) => dominatingWithout(candidates, peers, session, PROVIDERS));
  return { runs: picks.map((pick, session) => candidates[pick]![session]!), picks };
}

/**
 * Per session: ctxkit cross-validated against the cheapest peer there, and against the cheapest peer that keeps the
 * goal there (`ceilings`), per pricing.
 */
function perSessionGoalTable(
  corpus: readonly CorpusConversation[],
  cv: { runs: readonly Runs[]; picks: readonly number[] },
  peers: readonly (readonly Runs[])[],
  ceilings: CostCeilings,
): string {
  let met = 0;
  let metKeeping = 0;
  const change = (cost: number, of: number) =>
    of === Number.POSITIVE_INFINITY ? "none keeps it" : `${cost <= of ? "" : "+"}${pct(cost / of - 1)}`;
  const rows = corpus.map((entry, session) => {
    const run = cv.runs[session]!;
    const cells: string[] = [];
    let all = true;
    let keeping = true;
    for (const provider of PROVIDERS) {
      const of = run[provider];
      const cheapest = Math.min(...peers.map((runs) => runs[session]![provider].withRereads));
      const ceiling = ceilings[session]![provider];
      const anchors = of.grounding.anchors === 0 ? 1 : of.grounding.anchorsKept / of.grounding.anchors;
      all &&= keepsGoal(of) && of.withRereads <= cheapest;
      keeping &&= keepsGoal(of) && of.withRereads <= ceiling;
      cells.push(
        `${pct(of.grounding.mean)} · ${of.grounding.anchors === 0 ? "—" : pct(anchors)} · ` +
          `${change(of.withRereads, cheapest)} · ${change(of.withRereads, ceiling)}`,
      );
    }
    if (all) met++;
    if (keeping) metKeeping++;
    return [
      entry.name.length > 40 ? `…${entry.name.slice(-37)}` : entry.name,
      CANDIDATES[cv.picks[session]!]!.label,
      ...cells,
      all ? "yes" : "**no**",
      keeping ? "yes" : "**no**",
    ];
  });
  return [
    markdownTable(
      [
        "session",
        "setting chosen without it",
        "Anthropic: grounding · anchors · cost vs cheapest peer · vs cheapest peer keeping 99%",
        "OpenAI: the same",
        "goal as written",
        "goal against peers keeping 99%",
      ],
      rows,
    ),
    "",
    `Goal (strict grounding and anchors ≥ 99%, cost ≤ the cheapest peer's, both pricings) met on ${met} of ` +
      `${corpus.length} sessions; against the cheapest peer that keeps 99% there (the cheapest peer is often one ` +
      `that keeps far less: CowAgent, co-cli), met on ${metKeeping}.`,
  ].join("\n");
}

/** Each session's reuse counts, and the corpus's (set by `countCorpusReuse`). */
const reuseCounts = new Map<CorpusConversation, ReuseCounts>();
let corpusReuse = emptyReuseCounts();

/** Counts what the agent used again in each session of `corpus`. */
function countCorpusReuse(corpus: readonly CorpusConversation[]): void {
  corpusReuse = emptyReuseCounts();
  reuseCounts.clear();
  for (const entry of corpus) {
    const counts = emptyReuseCounts();
    countReuse(entry.messages, counts);
    countReuse(entry.messages, corpusReuse);
    reuseCounts.set(entry, counts);
  }
}

/** The reuse rates and their weight measured on every session but `entry`, as if `entry` had never been seen. */
function heldOutPolicy(entry: CorpusConversation): {
  reuseRates: Record<ContextKind, number[]>;
  reuseRatesWeight: number;
} {
  const others = [...reuseCounts].filter(([other]) => other !== entry).map(([, counts]) => counts);
  return {
    reuseRates: fittedReuseRates(withoutCounts(corpusReuse, reuseCounts.get(entry)!)),
    reuseRatesWeight: Math.min(FIXED, reuseRatesWeight(others)),
  };
}

/** The measured reuse rates behind governance's "still needed" rule, and their fit (src/governance/reuse-rates.ts). */
function reuseTable(): string {
  const counts = corpusReuse;
  const rates = reuseRates(counts);
  const fitted = fittedReuseRates(counts);
  const label = (bucket: (typeof AGE_BUCKETS)[number]) =>
    bucket.to === Number.POSITIVE_INFINITY
      ? `${bucket.from}+`
      : bucket.from === bucket.to
        ? `${bucket.from}`
        : `${bucket.from}–${bucket.to}`;
  return markdownTable(
    ["kind of context (pieces)", ...AGE_BUCKETS.map((bucket) => `age ${label(bucket)}`)],
    Object.entries(rates).flatMap(([kind, row]) => [
      [`${kind} (${counts[kind as ContextKind].pieces})`, ...row.map((rate) => pct(rate))],
      [`${kind}, fitted`, ...fitted[kind as ContextKind].map((rate) => pct(rate))],
    ]),
  );
}

/** Whether the rates governance ships are today's fit (to their three decimals), and their weight today's. */
function shippedRatesAreTodays(): boolean {
  const fitted = fittedReuseRates(corpusReuse);
  return (
    Object.entries(DEFAULT_REUSE_RATES).every(([kind, row]) =>
      row.every((rate, bucket) => Math.abs(rate - fitted[kind as ContextKind][bucket]!) < 0.0005 + 1e-9),
    ) && Math.round(reuseRatesWeight([...reuseCounts.values()])) === DEFAULT_REUSE_RATES_WEIGHT
  );
}

/** ctxkit's offline summary of each range a recorded Claude Code compaction summarised, against that summary. */
async function coverageTable(corpus: readonly CorpusConversation[], counter: TokenCounter): Promise<string> {
  const rows: (string | number)[][] = [];
  const summarizer = createExtractiveSummarizer({ counter });
  for (const entry of corpus) {
    for (const row of await summaryCoverage(entry.conversation.messages, summarizer, counter))
      rows.push([
        entry.name.split("/").at(-1)!.slice(0, 13),
        row.messages,
        row.recordedTokens.toLocaleString("en-US"),
        row.ctxkitTokens.toLocaleString("en-US"),
        `${pct(row.coverage)} of ${row.kept}`,
        `${pct(row.recordedUsedShare)} / ${pct(row.ctxkitUsedShare)} of ${row.usedAfter}`,
      ]);
  }
  if (rows.length === 0) return "No transcript in the shared corpus holds a recorded compaction summary.";
  return markdownTable(
    [
      "session",
      "messages summarised",
      "Claude Code's summary, tokens",
      "ctxkit's (offline), tokens",
      "of what Claude Code's kept, ctxkit keeps",
      "of what the agent used after, kept: Claude Code / ctxkit",
    ],
    rows,
  );
}

async function calibrationTable(): Promise<string> {
  const rows: (string | number)[][] = [];
  for (const file of transcriptFiles.filter((path) => path.includes("claude-code"))) {
    for (const conversation of await importTranscriptFile(file)) {
      if (conversation.sidechain === true) continue;
      const calibration: CacheCalibration | undefined = calibrateCache(conversation);
      if (calibration === undefined || calibration.requests < 5) continue;
      const error = (modelled: number, recorded: number) =>
        recorded === 0 ? "—" : `${modelled >= recorded ? "+" : ""}${pct(modelled / recorded - 1)}`;
      const cost = (totals: { read: number; write: number }) =>
        totals.read * cacheProfiles.anthropic.read + totals.write * cacheProfiles.anthropic.write;
      rows.push([
        transcriptName(file).split("/").at(-1)!.slice(0, 13),
        calibration.requests,
        calibration.longTtl ? "1 h" : "5 min",
        k(calibration.recorded.read),
        error(calibration.modelled.read, calibration.recorded.read),
        k(calibration.recorded.write),
        error(calibration.modelled.write, calibration.recorded.write),
        error(cost(calibration.modelled), cost(calibration.recorded)),
        calibration.clientRewrites,
      ]);
    }
  }
  return markdownTable(
    [
      "Claude Code session",
      "requests compared",
      "TTL",
      "cache read (billed)",
      "model error",
      "cache write (billed)",
      "model error",
      "cost error",
      "client rewrites",
    ],
    rows,
  );
}

/** One stress window's figures: every policy, and ctxkit's default cross-validated among the candidates there. */
interface StressWindow {
  readonly window: number;
  readonly sessions: number;
  readonly totals: Total[];
  /** The candidate each session was scored with, chosen on the other sessions at this window. */
  readonly picks: readonly number[];
}

const CROSS_VALIDATED = "ctxkit default, cross-validated";

/**
 * Every policy at each stress window on the sessions whose history exceeds it, and ctxkit's default
 * cross-validated there: each session scored with the candidate whose weakest strict figure (grounding or anchors,
 * either pricing) is highest on the other sessions at that window (`bestWithout`), reuse rates held out too.
 */
async function stressWindows(
  all: readonly CorpusConversation[],
  corpus: readonly CorpusConversation[],
): Promise<StressWindow[]> {
  const stress: StressWindow[] = [];
  for (const window of STRESS_WINDOWS) {
    const longer = corpus.filter((entry) => entry.tokens > window);
    if (longer.length === 0) continue;
    const runs = await replayAll(
      all,
      longer,
      benchPolicies,
      () => window,
      `${window / 1000}k`,
      heldOutCtxkit,
      () => window,
    );
    // The default candidate is the "ctxkit default" row already replayed: only the others are replayed again.
    const others = await replayAll(
      all,
      longer,
      candidatePolicies.slice(1),
      () => window,
      `${window / 1000}k candidates`,
      heldOutCtxkit,
      () => window,
    );
    const defaultIndex = benchPolicies.findIndex((policy) => policy.name === "ctxkit default");
    const candidates = [runs.runs[defaultIndex]!, ...others.runs].map((row) => present(row));
    const picks = longer.map((_, session) => bestWithout(candidates, session, PROVIDERS));
    const cv = totalOf(
      CROSS_VALIDATED,
      picks.map((pick, session) => candidates[pick]![session]!),
      longer.map(() => window),
    );
    const totals = benchPolicies.map((policy, index) =>
      totalOf(policy.name, present(runs.runs[index]!), runs.windows[index]!),
    );
    stress.push({ window, sessions: longer.length, totals: [cv, ...totals], picks });
  }
  return stress;
}

/** The stress tables: every policy at one window smaller than the sessions' histories, and the verdicts. */
function stressMarkdown(stress: readonly StressWindow[]): string[] {
  return stress.flatMap(({ window, sessions, totals, picks }) => [
    `### Stress: all policies in one ${window / 1000}k window`,
    "",
    `The ${sessions} sessions whose history exceeds ${window / 1000}k tokens; peers scaled as in the ` +
      `${SAME_WINDOW / 1000}k table, ctxkit with reuse rates held out. Every policy's requests carry the recorded ` +
      "system prompt and tools unless they would take more than a quarter of the usable window (then none does). " +
      `**${CROSS_VALIDATED}**: each session with the candidate setting (${CANDIDATES.map((candidate) => candidate.label).join(", ")}) ` +
      "whose weakest strict figure is highest on the other sessions at this window — chosen: " +
      `${CANDIDATES.map((candidate, index) => `${candidate.label} ${picks.filter((pick) => pick === index).length}`).join(", ")}. ` +
      "Goal: ctxkit's strict grounding at least the best peer's, at a cost no higher than the cheapest peer reaching " +
      "95%. A request over the window would be refused by the provider: the goal as written credits it as sent " +
      "(strict grounding; its column says how many), the yardstick we would use scores it as keeping nothing " +
      "(strict grounding, over-window refused; a request ctxkit's pre-flight refused counts so too).",
    "",
    markdownTable(
      [
        "policy",
        "cost with re-reads: Anthropic",
        "OpenAI",
        "strict grounding",
        "strict grounding, over-window refused",
        "strict edit anchors",
        "lenient grounding",
        "requests over window",
      ],
      totals.map((total) => [
        total.name,
        k(total.cost.anthropic.withRereads),
        k(total.cost.openai.withRereads),
        byProvider(total.grounding),
        byProvider(total.inWindowGrounding),
        byProvider(total.anchors),
        byProvider(total.lenientGrounding),
        total.overWindow,
      ]),
    ),
    "",
    ...stressVerdicts(totals, (total) => total.grounding, "Goal as written (over-window requests sent)").map(
      (line) => `- ${line}`,
    ),
    ...stressVerdicts(totals, (total) => total.inWindowGrounding, "Over-window requests refused").map(
      (line) => `- ${line}`,
    ),
    "",
    "The frontier at this window, with over-window requests refused (the yardstick we would use):",
    "",
    frontierTable(totals, CROSS_VALIDATED, (total) => total.inWindowGrounding),
    "",
  ]);
}

/** Section 4 of the benchmark. */
export default async function policies(): Promise<BenchSection> {
  const counter = await createExactCounter("o200k_base");
  const all = await sharedCorpus(counter);
  // BENCH_SESSIONS (a regular expression over session names) narrows the corpus for quick iterations.
  const only =
    process.env["BENCH_SESSIONS"] === undefined ? undefined : new RegExp(process.env["BENCH_SESSIONS"]);
  const corpus = all.filter(
    (entry) =>
      entry.tokens >= MIN_TOKENS &&
      entry.requests >= MIN_REQUESTS &&
      (only === undefined || only.test(entry.name)),
  );
  countCorpusReuse(corpus);
  const began = Date.now();
  // CTXKIT_BENCH_ONLY=stress: the stress windows alone (iterations on the policy under window pressure).
  if (process.env["CTXKIT_BENCH_ONLY"] === "stress") {
    const stress = await stressWindows(all, corpus);
    return {
      title: "4. Cost and next-step grounding on real transcripts (stress windows only)",
      goal: "At 64k and 32k, ctxkit default's strict grounding at least the best peer's at a cost no higher than the cheapest peer reaching 95% (issue 32).",
      markdown: [
        ...stressMarkdown(stress),
        `Replays took ${((Date.now() - began) / 1000).toFixed(0)} s on ${workerCount()} worker threads.`,
      ].join("\n"),
    };
  }
  const real = await replayAll(all, corpus, benchPolicies, realWindow, "real windows");
  const candidates = await candidateRuns(all, corpus);
  // Sessions within a window are governed there as at their real one: only the longer ones are replayed again.
  const sameCorpus = corpus.filter((entry) => entry.tokens > SAME_WINDOW);
  const same = await replayAll(
    all,
    sameCorpus,
    benchPolicies,
    () => SAME_WINDOW,
    `${SAME_WINDOW / 1000}k`,
    heldOutCtxkit,
    () => SAME_WINDOW,
  );
  const stress = await stressWindows(all, corpus);
  const replayed = (Date.now() - began) / 1000;
  const realRuns = real.runs.map((row) => present(row));
  const realTotals = benchPolicies.map((policy, index) =>
    totalOf(policy.name, realRuns[index]!, real.windows[index]!),
  );
  const sameTotals = benchPolicies.map((policy, index) =>
    totalOf(policy.name, present(same.runs[index]!), same.windows[index]!),
  );
  const recordedWindows = corpus.map((entry) => recordedWindow(entry));
  const peerIndices = benchPolicies
    .map((policy, index) => ({ policy, index }))
    .filter(({ policy }) => !policy.name.startsWith("ctxkit") && policy.name !== "no governance")
    .map(({ index }) => index);
  const peerRuns = peerIndices.map((index) => realRuns[index]!);
  const ceilings = keepingCeilings(peerRuns, corpus.length);
  const cv = crossValidated(candidates, peerRuns);
  const cvTotal = totalOf("ctxkit default, cross-validated", cv.runs, recordedWindows);
  const inSample = realTotals.find((total) => total.name === "ctxkit default")!;
  const headline = [
    cvTotal,
    { ...inSample, name: "ctxkit default, in-sample" },
    ...peerIndices.map((index) => realTotals[index]!),
  ];

  const names = benchPolicies.map((policy) => policy.name);
  const ctxkitIndex = names.indexOf("ctxkit default");
  const perTranscript = markdownTable(
    [
      "transcript",
      "agent",
      "requests",
      "history",
      "recorded agent's real spend (its provider)",
      ...names.map((name) => `${name}: A / O · grounding`),
    ],
    corpus.map((entry, row) => {
      const recorded = recordedSpend(
        entry.conversation.messages,
        cacheProfileFor(entry.conversation.messages.find((message) => message.model)?.model ?? "gpt-4o"),
      );
      return [
        entry.name.length > 50 ? `…${entry.name.slice(-47)}` : entry.name,
        agentOf(entry),
        entry.requests,
        k(entry.tokens),
        recorded === undefined ? "—" : k(recorded.costUnits),
        ...realRuns.map((runs) => {
          const run = runs[row]!;
          const grounding = byProvider({
            anthropic: run.anthropic.grounding.mean,
            openai: run.openai.grounding.mean,
          });
          return `${k(run.anthropic.withRereads)} / ${k(run.openai.withRereads)} · ${grounding}`;
        }),
      ];
    }),
  );

  const longest = corpus.reduce(
    (best, entry, index) => (entry.tokens > corpus[best]!.tokens ? index : best),
    0,
  );
  await writeFile(
    new URL(CHART, import.meta.url),
    lineChart(
      `Tokens per request: ${corpus[longest]!.name.split("/").at(-1)} (each policy at its real window)`,
      "input tokens",
      names.map((name, index) => ({ name, values: realRuns[index]![longest]!.anthropic.perRequest })),
    ),
  );
  const ctxkitReal = realTotals[ctxkitIndex]!;
  const markdown = [
    `Every main conversation in ../shared/data/transcripts whose history reaches ${MIN_TOKENS.toLocaleString("en-US")} ` +
      `tokens over at least ${MIN_REQUESTS} requests (${corpus.length} transcripts: ` +
      `${[...new Set(corpus.map((entry) => agentOf(entry)))].join(", ")}), replayed one request per recorded ` +
      "assistant reply. How it is measured:",
    "",
    "- **Cost** is in units of the uncached input price, billed by the prompt-cache model (src/pricing): Anthropic " +
      "(Claude Sonnet 4.5 ratios) caches only prefixes ending at a `cache_control` breakpoint — where ctxkit's " +
      "payload builders put them (`planAnthropicBreakpoints`: system and tools, the newest message, the " +
      "governor's cache anchors for ctxkit's own policies, the previous request's newest) for every policy but " +
      "Claude Code's own (system and tools, newest message) — for 5 minutes from their last use (recorded times between requests), " +
      "reads 0.1×, writes 1.25×, output 5×; OpenAI (GPT-5 ratios) caches every prefix from 1,024 tokens in 128-token " +
      "steps for 5 minutes of inactivity, reads 0.1×, output 8×. On recorded Claude Code sessions where the client " +
      "never rewrote what it had sent, the model reproduces Anthropic's billed cache reads and writes; where it did " +
      "(not in the transcript), the model under-counts writes (calibration below, per session).",
    "- **As run**: the requests' input with the offline summarizer, which is free. **+ LLM summaries**: every " +
      "summary billed as the call an LLM summarizer on the session's model makes (its prompt at 1×, the summary at " +
      "the output price). ctxkit weighs that price before it summarises, so its headline replay runs with the " +
      "summarizer priced as an LLM and its as-run replay with it free; the peers decide the same way either way.",
    "- **Next-step grounding**: of the spans the recorded agent's reply to request k copied from its context — each " +
      "line an edit replaced or a patch expected (edit anchors), every other whole line it carried over, paths, " +
      "distinctive identifiers, hyphenated names and flags, long literals in its text and tool arguments " +
      "(docs/grounding.md) — the share still in view k (src/metrics/grounding.ts). A span the history never held " +
      "does not count. **Strict** (every headline figure): a span counts only where it is verbatim in a recorded " +
      "message (or a block of one) the view sent unmodified; a span found only in text governance wrote (a " +
      "summary, an offload preview, an outline, an elided argument) is missing. The lenient figures, labelled, " +
      "credit such text too. " +
      "**+ re-reads**: each request that lacked a span (strictly) costs one more request at its size " +
      "(read from the cache it just wrote) plus the outputs that held the missing spans (written), once per output " +
      "until the next checkpoint, and what it brought back rides (read from the cache) in every request until " +
      "then. This is the headline cost.",
    "- **Windows**: each peer at the window its users really have (Claude Code 200k, Gemini CLI 1M with compression " +
      "at half of it, Codex 272k, OpenCode 200k) and the model-agnostic policies (ctxkit, no governance, co-cli, " +
      "CowAgent, Anthropic context editing, LangChain) at the recorded agent's window (Claude Code 200k, Codex 272k, " +
      "Gemini CLI 1M, GPT-4o recordings 128k); Claude Code's own policy runs at 1M on the Claude Code sessions " +
      "that ran at 1M. Further tables run everything in one 128k, 64k and 32k window, on the sessions whose history " +
      "exceeds it (the " +
      "budgets Claude Code, Gemini CLI, Codex and OpenCode size for windows of 200k and more scaled by 128/200; " +
      "per-output caps and the fixed triggers of CowAgent and context editing as documented).",
    "- Peers are reimplemented from their documented behaviour as ctxkit processors (bench/policies/), without " +
      "ctxkit's safety nets; * marks Anthropic's server-side context editing, reimplemented from its documentation. " +
      "LangChain v1 is the real `langchain` package (`createAgent` with `summarizationMiddleware` and " +
      "`contextEditingMiddleware`) driven by a replaying chat model; its summarization has no default trigger, so " +
      "the bench sets one relative to the window (at 0.8 of it, keeping 0.3; the docs' snippet, 4,000 tokens " +
      "keeping 20 messages, is sized for a demo). Every policy's summaries come from the same " +
      "offline extractive text.",
    "",
    "### Headline: cross-validated, strict",
    "",
    "ctxkit's default as a session it has never seen gets it (leave-one-session-out): for each session, its reuse " +
      "rates and their weight are measured on the other sessions, and so is the choice among the candidate " +
      `settings (${CANDIDATES.map((candidate) => candidate.label).join(", ")}): the one that dominates the most ` +
      "peers pooled over the others under both pricings (costs no more, keeps no less strict grounding and no " +
      "fewer strict anchors, as the tables print them; on a tie the default, unless a tied candidate dominates " +
      "it). The in-sample row is the shipped " +
      "default with the shipped rates (measured on all sessions, this one included). Grounding and anchors are " +
      "**strict**: a span counts only where it is verbatim in a recorded message the view sent unmodified. " +
      "Peers at their real windows.",
    "",
    costTable(headline),
    "",
    qualityTable(headline),
    "",
    ...verdicts(headline, "ctxkit default, cross-validated").map((line) => `- ${line}`),
    "",
    "**The frontier.** Against each peer, pooled over all transcripts: one policy dominates another when it costs " +
      "no more and keeps no less of both strict figures (compared as printed: 0.1% of cost, 0.1 point); otherwise " +
      "they trade. A peer ctxkit does not dominate is what blocks the goal: it keeps more for what it costs more, " +
      "or costs less for what it keeps less.",
    "",
    frontierTable(headline, "ctxkit default, cross-validated"),
    "",
    perSessionGoalTable(corpus, cv, peerRuns, ceilings),
    "",
    "### At each policy's real window",
    "",
    "Cost in thousands of units (all transcripts):",
    "",
    costTable(realTotals),
    "",
    qualityTable(realTotals),
    "",
    ...verdicts(realTotals).map((line) => `- ${line}`),
    "",
    `### All policies in one ${SAME_WINDOW / 1000}k window`,
    "",
    `The ${sameCorpus.length} sessions whose history exceeds ${SAME_WINDOW / 1000}k tokens (the others are governed ` +
      "there as at their real window); ctxkit with reuse rates held out.",
    "",
    markdownTable(
      [
        "policy",
        "cost with re-reads: Anthropic",
        "OpenAI",
        "grounding",
        "edit anchors",
        "requests over window",
      ],
      sameTotals.map((total) => [
        total.name,
        k(total.cost.anthropic.withRereads),
        k(total.cost.openai.withRereads),
        byProvider(total.grounding),
        byProvider(total.anchors),
        total.overWindow,
      ]),
    ),
    "",
    ...verdicts(sameTotals).map((line) => `- ${line}`),
    "",
    ...stressMarkdown(stress),
    `![Tokens per request, longest session](${CHART})`,
    "",
    "### Per transcript (real windows)",
    "",
    "Cost with LLM summaries and re-reads (thousands of units, Anthropic / OpenAI caching) and next-step grounding; " +
      "the recorded agent's real spend is its reported usage priced for its own provider. The policies' columns " +
      "count every request with one tokenizer (o200k_base) so that they compare with each other; the recorded " +
      "spend is in the provider's own tokens (Claude's tokenizer counts roughly 15% more on these sessions) and " +
      "counts input only, so it is no like-for-like yardstick for them: `ctxkit replay`, which counts with the " +
      "session's model and anchors on its reported usage, compares ctxkit with the recorded spend (README).",
    "",
    perTranscript,
    "",
    "### What each default buys",
    "",
    "ctxkit's default at the recorded agents' windows with one setting changed (docs/policy.md explains each), " +
      "every session with the reuse rates and weight measured on the others (as a session ctxkit has never seen " +
      "gets them): the candidates cross-validation chooses among.",
    "",
    candidatesTable(candidates, recordedWindows),
    "",
    "### What the agent uses again: the rates behind `groundingTarget`",
    "",
    "Of the requests a piece of context was in the history for, at each age (requests since it arrived), the share " +
      "whose reply used it — copied a span no newer message held (bench/support/reuse-rates.ts) — and below each " +
      "kind its fit: the closest sequence that does not rise with age, each age weighted by the requests it counted " +
      "(a piece cannot grow likelier to be used with age; governance relies on it: a piece it let go is not needed " +
      "again while the rates stand). ctxkit keeps a piece verbatim while this rate is at least 1 − `groundingTarget` (0.5% by " +
      "default) or keeping it costs less than the rate times reading it again. " +
      "Governance blends these rates with the session's own count (the same count, made as the session goes): per " +
      "kind and age they weigh as many requests as the sessions' spread says one corpus-wide rate is worth — " +
      `${reuseRatesWeight([...reuseCounts.values()]).toFixed(1)} here (the size of the beta prior that matches how ` +
      "much the sessions' rates differ beyond their sampling noise, pooled over kinds and ages). " +
      (shippedRatesAreTodays()
        ? "The rates and weight governance ships (src/governance/reuse-rates.ts) are this fit and this weight, so " +
          "they come from the sessions this section scores (in-sample): the held-out rows above show what that is " +
          "worth."
        : "**The rates or weight governance ships (src/governance/reuse-rates.ts) differ from this fit: update " +
          "them.**"),
    "",
    reuseTable(),
    "",
    "### Summaries against Claude Code's own",
    "",
    "Where a transcript holds Claude Code's compaction summary (`isCompactSummary`), ctxkit's offline summary of " +
      "the same range at most the same size: of the paths, identifiers, literals and whole lines of the range " +
      "Claude Code's summary kept, the share ctxkit's keeps; and of what the agent went on to use from that range " +
      "after the compaction, the share each summary kept.",
    "",
    await coverageTable(corpus, counter),
    "",
    "### Calibration of the prompt-cache model",
    "",
    "Re-pricing what Claude Code sent — its own breakpoints (system and tools, newest message) and TTL, token " +
      "positions from the reported usage — with the cache model, against what Anthropic billed, per session with " +
      "at least 5 compared requests (the first request and any after the cache expired are not compared: the " +
      "cache's state then depends on the user's other sessions). **Client rewrites** are requests whose billed read " +
      "stopped short of the prefix cached by the previous request although it could not have expired: Claude Code " +
      "changed something it had sent (a re-rendered reminder, an interrupt), which the transcript does not record — " +
      "there the model, which sees only the transcript, under-counts writes.",
    "",
    await calibrationTable(),
    "",
    `Windows of ctxkit default here: ${ctxkitReal.windows}. Replays took ${replayed.toFixed(0)} s on ` +
      `${workerCount()} worker threads.`,
  ];
  return {
    title: "4. Cost and next-step grounding on real transcripts",
    goal:
      "Cross-validated (leave-one-session-out), ctxkit default keeps strict next-step grounding ≥ 99% and edit " +
      "anchors ≥ 99% under Anthropic and OpenAI pricing at a cost no higher than the cheapest peer's, on every " +
      "session; at 64k and 32k its grounding is at least the best peer's at a cost no higher than the cheapest " +
      "peer reaching 95% (issue 32).",
    markdown: markdown.join("\n"),
  };
}
