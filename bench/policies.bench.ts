// Section 4: cost and retention on real transcripts — no governance, ctxkit's default and the peers' policies,
// all replayed through the same machinery, summarizer and window.
import { writeFile } from "node:fs/promises";
import { cachePricing } from "../src/governance/cache-economics.ts";
import { RetentionTracker } from "../src/metrics/index.ts";
import { recordedSpend, replayConversation, type ReplayRequest } from "../src/replay/replay.ts";
import { createExtractiveSummarizer } from "../src/summarize/index.ts";
import { createExactCounter } from "../src/tokens/exact-counter.ts";
import type { BenchSection } from "./run.ts";
import { benchPolicies } from "./policies/index.ts";
import { agentOf, sharedCorpus, type CorpusConversation } from "./support/corpus.ts";
import { markdownTable } from "./support/stats.ts";
import { lineChart } from "./support/svg-chart.ts";

const CONTEXT_WINDOW = 128_000;
/** A transcript is long enough to govern when its history reaches this many tokens over this many requests. */
const MIN_TOKENS = 10_000;
const MIN_REQUESTS = 10;
const CHART = "charts/policies-longest-session.svg";

interface Outcome {
  readonly governed: number;
  readonly costAnthropic: number;
  readonly costOpenAI: number;
  readonly peak: number;
  readonly overWindow: number;
  readonly compactions: number;
  readonly retention: number;
  readonly perRequest: readonly number[];
}

function cost(requests: readonly ReplayRequest[], pricing: { read: number; write: number }): number {
  let units = 0;
  for (const request of requests)
    units +=
      request.cachedTokens * pricing.read + (request.governedTokens - request.cachedTokens) * pricing.write;
  return units;
}

async function replay(
  entry: CorpusConversation,
  policyIndex: number,
  reserved: { value: number },
): Promise<Outcome> {
  const counter = await createExactCounter("o200k_base");
  const policy = benchPolicies[policyIndex]!;
  const retention = new RetentionTracker();
  const { requests, totals } = await replayConversation(entry.conversation.messages, {
    contextWindow: CONTEXT_WINDOW,
    counter,
    summarizer: createExtractiveSummarizer({ counter }),
    policy: policy.policy,
    ...(policy.processors !== undefined && { processors: policy.processors }),
    retention,
  });
  reserved.value = Math.min(20_000, 8_192, CONTEXT_WINDOW / 4);
  // Refused requests (ctxkit's pre-flight) are not sent: they cost nothing and count as over the window.
  const overWindow = requests.filter(
    (request) => request.error !== undefined || request.governedTokens + reserved.value > CONTEXT_WINDOW,
  ).length;
  return {
    governed: totals.governedInputTokens,
    costAnthropic: cost(requests, cachePricing.anthropic),
    costOpenAI: cost(requests, cachePricing.openai),
    peak: totals.maxGovernedTokens,
    overWindow,
    compactions: totals.compactions,
    retention: totals.retention,
    perRequest: requests.map((request) => request.governedTokens),
  };
}

const k = (value: number) => `${(value / 1000).toFixed(value >= 100_000 ? 0 : 1)}k`;
const pct = (value: number) => `${(value * 100).toFixed(1)}%`;

/** Section 4 of the benchmark issue. */
export default async function policies(): Promise<BenchSection> {
  const counter = await createExactCounter("o200k_base");
  const corpus = (await sharedCorpus(counter)).filter(
    (entry) => entry.tokens >= MIN_TOKENS && entry.requests >= MIN_REQUESTS,
  );
  const reserved = { value: 0 };
  const results: Outcome[][] = [];
  for (const entry of corpus) {
    const row: Outcome[] = [];
    for (let index = 0; index < benchPolicies.length; index++) row.push(await replay(entry, index, reserved));
    results.push(row);
    process.stderr.write(
      `  ${entry.name}: ${row.map((outcome) => Math.round(outcome.costAnthropic)).join(" ")}\n`,
    );
  }

  const names = benchPolicies.map((policy) => policy.name);
  const totals = names.map((name, index) => {
    const column = results.map((row) => row[index]!);
    const sum = (pick: (outcome: Outcome) => number) =>
      column.reduce((total, outcome) => total + pick(outcome), 0);
    return {
      name,
      governed: sum((outcome) => outcome.governed),
      costAnthropic: sum((outcome) => outcome.costAnthropic),
      costOpenAI: sum((outcome) => outcome.costOpenAI),
      peak: Math.max(...column.map((outcome) => outcome.peak)),
      overWindow: sum((outcome) => outcome.overWindow),
      compactions: sum((outcome) => outcome.compactions),
      retention: sum((outcome) => outcome.retention) / column.length,
    };
  });
  const recorded = corpus.map((entry) => ({
    anthropic: recordedSpend(entry.conversation.messages, cachePricing.anthropic),
    openai: recordedSpend(entry.conversation.messages, cachePricing.openai),
  }));

  const totalTable = markdownTable(
    [
      "policy (all transcripts)",
      "input tokens",
      "cost, Anthropic",
      "cost, OpenAI",
      "peak context",
      "requests over window",
      "compactions",
      "retention (mean)",
    ],
    totals.map((total) => [
      total.name,
      k(total.governed),
      k(total.costAnthropic),
      k(total.costOpenAI),
      k(total.peak),
      total.overWindow,
      total.compactions,
      pct(total.retention),
    ]),
  );
  const perTranscript = markdownTable(
    [
      "transcript",
      "agent",
      "requests",
      "history",
      ...names.map((name) => `${name}: cost A / O · ret.`),
      "recorded agent: input · cost A / O",
    ],
    corpus.map((entry, row) => [
      entry.name.length > 60 ? `…${entry.name.slice(-57)}` : entry.name,
      agentOf(entry.name),
      entry.requests,
      k(entry.tokens),
      ...results[row]!.map(
        (outcome) => `${k(outcome.costAnthropic)} / ${k(outcome.costOpenAI)} · ${pct(outcome.retention)}`,
      ),
      recorded[row]!.anthropic === undefined
        ? "—"
        : `${k(recorded[row]!.anthropic.inputTokens)} · ${k(recorded[row]!.anthropic.costUnits)} / ${k(recorded[row]!.openai!.costUnits)}`,
    ]),
  );
  const detail = markdownTable(
    ["transcript", "policy", "input tokens", "peak", "over window", "compactions", "retention"],
    corpus.flatMap((entry, row) =>
      results[row]!.map((outcome, index) => [
        entry.name.length > 50 ? `…${entry.name.slice(-47)}` : entry.name,
        names[index]!,
        k(outcome.governed),
        k(outcome.peak),
        outcome.overWindow,
        outcome.compactions,
        pct(outcome.retention),
      ]),
    ),
  );

  const longest = corpus.reduce(
    (best, entry, index) => (entry.tokens > corpus[best]!.tokens ? index : best),
    0,
  );
  await writeFile(
    new URL(CHART, import.meta.url),
    lineChart(
      `Tokens per request: ${corpus[longest]!.name.split("/").at(-1)} (${CONTEXT_WINDOW / 1000}k window)`,
      "input tokens",
      names.map((name, index) => ({ name, values: results[longest]![index]!.perRequest })),
      CONTEXT_WINDOW,
    ),
  );

  const ctxkit = totals.find((total) => total.name === "ctxkit default")!;
  const aggressive = totals.find((total) => total.name === "ctxkit aggressive")!;
  const peers = totals.filter((total) => !total.name.startsWith("ctxkit") && total !== totals[0]);
  const byCost = (key: "costAnthropic" | "costOpenAI") => [...peers].sort((a, b) => a[key] - b[key]);
  const bestPeerRetention = Math.max(...peers.map((peer) => peer.retention));
  const verdict = (key: "costAnthropic" | "costOpenAI", label: string) => {
    const cheaper = byCost(key).filter((peer) => peer[key] < ctxkit[key]);
    if (cheaper.length === 0)
      return `${label}: ctxkit default is the cheapest governed policy (${k(ctxkit[key])} units; next ${byCost(key)[0]!.name} at ${k(byCost(key)[0]![key])}).`;
    const atRetention = byCost(key).filter((peer) => peer.retention >= 0.9);
    return (
      `${label}: **${cheaper.map((peer) => `${peer.name} (${k(peer[key])} units, retention ${pct(peer.retention)})`).join(", ")} ` +
      `${cheaper.length === 1 ? "is" : "are"} cheaper** than ctxkit default (${k(ctxkit[key])}, retention ${pct(ctxkit.retention)})` +
      (atRetention.length > 0 && atRetention[0]![key] > ctxkit[key]
        ? `; of the peers with a retention of at least 90%, the cheapest is ${atRetention[0]!.name} at ` +
          `${k(atRetention[0]![key])} (ctxkit default ${pct(1 - ctxkit[key] / atRetention[0]![key])} cheaper).`
        : ".")
    );
  };
  const markdown = [
    `Every main conversation in ../shared/data/transcripts whose history reaches ${MIN_TOKENS.toLocaleString("en-US")} ` +
      `tokens over at least ${MIN_REQUESTS} model requests (${corpus.length} transcripts: ` +
      `${[...new Set(corpus.map((entry) => agentOf(entry.name)))].join(", ")}), replayed one request per recorded ` +
      `assistant reply with \`replayConversation\`: ${CONTEXT_WINDOW.toLocaleString("en-US")}-token window for every ` +
      "policy, o200k_base counts, the same offline extractive summarizer (summaries ≤ 6k tokens), the recorded " +
      "system prompt and tools as fixed tokens. Cost is in units of the uncached input price: cached prefix read " +
      "at 0.10 and the rest written at 1.25 (Anthropic), or read at 0.50 and written at 1.0 (OpenAI). Retention " +
      "as DESIGN.md defines it (`RetentionTracker`). Compactions: summarising or turn-dropping checkpoints.",
    "",
    "The peers are reimplemented from their documented behaviour (DESIGN.md table, the co-cli and CowAgent seeds) " +
      "as ctxkit processors in bench/policies/, run before every request without ctxkit's safety nets (no " +
      "pre-flight, no ingest cap); their absolute token budgets, set for ~200k windows, are scaled by " +
      `${CONTEXT_WINDOW / 1000}/200 (per-output caps are kept as documented). Requests over the window are counted, ` +
      "not refused, except CowAgent, which goes through its own overflow emergency.",
    "",
    totalTable,
    "",
    `- ${verdict("costAnthropic", "Anthropic prices")}`,
    `- ${verdict("costOpenAI", "OpenAI prices")}`,
    `- Retention: ctxkit default ${pct(ctxkit.retention)}; best peer ${pct(bestPeerRetention)} ` +
      `(${peers.find((peer) => peer.retention === bestPeerRetention)!.name}) — ` +
      `${ctxkit.retention >= bestPeerRetention ? "no lower" : "**lower**"}.`,
    `- The aggressive preset (\`preset("aggressive")\`): ${k(aggressive.costAnthropic)} / ` +
      `${k(aggressive.costOpenAI)} units (Anthropic / OpenAI) at retention ${pct(aggressive.retention)}; peers ` +
      `cheaper than it: ${
        peers
          .filter((peer) => peer.costAnthropic < aggressive.costAnthropic)
          .map((peer) => `${peer.name} (${k(peer.costAnthropic)}, retention ${pct(peer.retention)})`)
          .join("; ") || "none"
      }.`,
    "",
    `![Tokens per request, longest session](${CHART})`,
    "",
    "Per transcript (cost in thousands of units, Anthropic / OpenAI, and retention; the last column is what the " +
      "recorded agent really spent, from the usage in the transcript, when it has any):",
    "",
    perTranscript,
    "",
    "<details><summary>Per transcript and policy: input tokens, peak context, requests over the window, compactions, retention</summary>",
    "",
    detail,
    "",
    "</details>",
  ];
  return {
    title: "4. Cost and retention on real transcripts",
    goal: "ctxkit default has the lowest cost of all policies at a retention no lower than the best peer's.",
    markdown: markdown.join("\n"),
  };
}
