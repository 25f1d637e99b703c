// Section 4: cost and retention on real transcripts — no governance, ctxkit's default and the peers' policies,
// all replayed through the same machinery, summarizer and window.
import { writeFile } from "node:fs/promises";
import { cachePricing, type CachePricingName } from "../src/governance/cache-economics.ts";
import { cacheProfiles } from "../src/pricing/cache-profile.ts";
import { RetentionTracker } from "../src/metrics/index.ts";
import type { Message } from "../src/model/message.ts";
import {
  recordedSpend,
  replayableMessages,
  replayConversation,
  requestPoints,
  type ReplayRequest,
} from "../src/replay/replay.ts";
import { createExtractiveSummarizer } from "../src/summarize/index.ts";
import type { Summarizer } from "../src/summarize/summarizer.ts";
import { createExactCounter } from "../src/tokens/exact-counter.ts";
import type { TokenCounter } from "../src/tokens/token-counter.ts";
import type { BenchSection } from "./run.ts";
import { benchPolicies, type BenchPolicy } from "./policies/index.ts";
import { agentOf, sharedCorpus, type CorpusConversation } from "./support/corpus.ts";
import { EditAnchorTracker } from "./support/edit-anchors.ts";
import { markdownTable } from "./support/stats.ts";
import { lineChart } from "./support/svg-chart.ts";

const CONTEXT_WINDOW = 128_000;
const RESERVED_OUTPUT = Math.min(20_000, 8_192, CONTEXT_WINDOW / 4);
/** A transcript is long enough to govern when its history reaches this many tokens over this many requests. */
const MIN_TOKENS = 10_000;
const MIN_REQUESTS = 10;
const CHART = "charts/policies-longest-session.svg";

/** One replay of one transcript under one policy. */
interface Run {
  readonly governed: number;
  readonly costAnthropic: number;
  readonly costOpenAI: number;
  readonly peak: number;
  readonly overWindow: number;
  readonly compactions: number;
  readonly retention: number;
  /** Tokens handed to the summarizer: what an LLM summarizer would have read. */
  readonly summarized: number;
  readonly anchorsSeen: number;
  readonly anchorsKept: number;
  readonly perRequest: readonly number[];
}

/** A policy on one transcript: its replay at Anthropic's prices, and at OpenAI's (the same run for the peers). */
interface Outcome {
  readonly anthropic: Run;
  readonly openai: Run;
}

function cost(requests: readonly ReplayRequest[], pricing: { read: number; write: number }): number {
  let units = 0;
  for (const request of requests)
    units +=
      request.cachedTokens * pricing.read + (request.governedTokens - request.cachedTokens) * pricing.write;
  return units;
}

/** The extractive summarizer, counting the tokens it is given. */
function countingSummarizer(counter: TokenCounter): { summarizer: Summarizer; tokens: () => number } {
  const inner = createExtractiveSummarizer({ counter });
  let tokens = 0;
  return {
    summarizer: {
      name: inner.name,
      summarize(request) {
        for (const message of request.messages) tokens += counter.countMessage(message);
        if (request.previousSummary !== undefined) tokens += counter.countText(request.previousSummary);
        return inner.summarize(request);
      },
    },
    tokens: () => tokens,
  };
}

async function replay(
  entry: CorpusConversation,
  policy: BenchPolicy,
  pricing: CachePricingName,
  counter: TokenCounter,
): Promise<Run> {
  const retention = new RetentionTracker();
  const anchors = new EditAnchorTracker();
  const summarizing = countingSummarizer(counter);
  const messages = replayableMessages(entry.conversation.messages);
  const points = requestPoints(messages);
  const { requests, totals } = await replayConversation(entry.conversation.messages, {
    contextWindow: CONTEXT_WINDOW,
    counter,
    summarizer: summarizing.summarizer,
    policy: policy.pricedByProvider ? { ...policy.policy, pricing } : policy.policy,
    ...(policy.processors !== undefined && { processors: policy.processors }),
    retention,
    onRequest: (index, view) => {
      const end = points[index]!;
      const reply: Message[] = [];
      for (let at = end; at < messages.length && messages[at]!.role === "assistant"; at++)
        reply.push(messages[at]!);
      anchors.observe(messages.slice(0, end), view, reply);
    },
  });
  // Refused requests (ctxkit's pre-flight) are not sent: they cost nothing and count as over the window.
  const overWindow = requests.filter(
    (request) => request.error !== undefined || request.governedTokens + RESERVED_OUTPUT > CONTEXT_WINDOW,
  ).length;
  return {
    governed: totals.governedInputTokens,
    costAnthropic: cost(requests, cachePricing.anthropic),
    costOpenAI: cost(requests, cachePricing.openai),
    peak: totals.maxGovernedTokens,
    overWindow,
    compactions: totals.compactions,
    retention: totals.retention,
    summarized: summarizing.tokens(),
    anchorsSeen: anchors.seen,
    anchorsKept: anchors.kept,
    perRequest: requests.map((request) => request.governedTokens),
  };
}

async function outcome(
  entry: CorpusConversation,
  policy: BenchPolicy,
  counter: TokenCounter,
): Promise<Outcome> {
  const anthropic = await replay(entry, policy, "anthropic", counter);
  const openai = policy.pricedByProvider ? await replay(entry, policy, "openai", counter) : anthropic;
  return { anthropic, openai };
}

const k = (value: number) => `${(value / 1000).toFixed(value >= 100_000 ? 0 : 1)}k`;
const pct = (value: number) => `${(value * 100).toFixed(1)}%`;

interface Total {
  readonly name: string;
  readonly governed: number;
  readonly costAnthropic: number;
  readonly costOpenAI: number;
  readonly retentionAnthropic: number;
  readonly retentionOpenAI: number;
  readonly peak: number;
  readonly overWindow: number;
  readonly compactions: number;
  readonly summarized: number;
  readonly anchors: number;
  readonly pricedByProvider: boolean;
}

function totalOf(policy: BenchPolicy, column: readonly Outcome[]): Total {
  const sum = (pick: (outcome: Outcome) => number) =>
    column.reduce((total, outcome) => total + pick(outcome), 0);
  const mean = (pick: (outcome: Outcome) => number) => sum(pick) / column.length;
  return {
    name: policy.name,
    governed: sum((outcome) => outcome.anthropic.governed),
    costAnthropic: sum((outcome) => outcome.anthropic.costAnthropic),
    costOpenAI: sum((outcome) => outcome.openai.costOpenAI),
    retentionAnthropic: mean((outcome) => outcome.anthropic.retention),
    retentionOpenAI: mean((outcome) => outcome.openai.retention),
    peak: Math.max(...column.map((outcome) => outcome.anthropic.peak)),
    overWindow: sum((outcome) => outcome.anthropic.overWindow),
    compactions: sum((outcome) => outcome.anthropic.compactions),
    summarized: sum((outcome) => outcome.anthropic.summarized),
    anchors:
      sum((outcome) => outcome.anthropic.anchorsKept) /
      Math.max(
        1,
        sum((outcome) => outcome.anthropic.anchorsSeen),
      ),
    pricedByProvider: policy.pricedByProvider === true,
  };
}

/** Section 4 of the benchmark issue. */
export default async function policies(): Promise<BenchSection> {
  const counter = await createExactCounter("o200k_base");
  const corpus = (await sharedCorpus(counter)).filter(
    (entry) => entry.tokens >= MIN_TOKENS && entry.requests >= MIN_REQUESTS,
  );
  const results: Outcome[][] = [];
  for (const entry of corpus) {
    const row: Outcome[] = [];
    for (const policy of benchPolicies) row.push(await outcome(entry, policy, counter));
    results.push(row);
    process.stderr.write(
      `  ${entry.name}: ${row.map((run) => Math.round(run.anthropic.costAnthropic)).join(" ")}\n`,
    );
  }
  const totals = benchPolicies.map((policy, index) =>
    totalOf(
      policy,
      results.map((row) => row[index]!),
    ),
  );
  const anchorsSeen = results.reduce((sum, row) => sum + row[0]!.anthropic.anchorsSeen, 0);

  const retentionCell = (total: Total) =>
    total.pricedByProvider
      ? `${pct(total.retentionAnthropic)} / ${pct(total.retentionOpenAI)}`
      : pct(total.retentionAnthropic);
  const totalTable = markdownTable(
    [
      "policy (all transcripts)",
      "input tokens",
      "cost, Anthropic",
      "cost, OpenAI",
      "peak context",
      "requests over window",
      "compactions",
      "summarizer input",
      "retention (mean)",
      "edit anchors in view",
    ],
    totals.map((total) => [
      total.name,
      k(total.governed),
      k(total.costAnthropic),
      k(total.costOpenAI),
      k(total.peak),
      total.overWindow,
      total.compactions,
      k(total.summarized),
      retentionCell(total),
      pct(total.anchors),
    ]),
  );
  const names = benchPolicies.map((policy) => policy.name);
  const perTranscript = markdownTable(
    [
      "transcript",
      "agent",
      "requests",
      "history",
      ...names.map((name) => `${name}: cost A / O · ret.`),
      "recorded agent: input · cost A / O",
    ],
    corpus.map((entry, row) => {
      const recordedA = recordedSpend(entry.conversation.messages, cacheProfiles.anthropic);
      const recordedO = recordedSpend(entry.conversation.messages, cacheProfiles.openai);
      return [
        entry.name.length > 60 ? `…${entry.name.slice(-57)}` : entry.name,
        agentOf(entry.name),
        entry.requests,
        k(entry.tokens),
        ...results[row]!.map(
          (run) =>
            `${k(run.anthropic.costAnthropic)} / ${k(run.openai.costOpenAI)} · ${pct(run.anthropic.retention)}`,
        ),
        recordedA === undefined
          ? "—"
          : `${k(recordedA.inputTokens)} · ${k(recordedA.costUnits)} / ${k(recordedO!.costUnits)}`,
      ];
    }),
  );
  const detail = markdownTable(
    [
      "transcript",
      "policy",
      "input tokens",
      "peak",
      "over window",
      "compactions",
      "retention",
      "edit anchors",
    ],
    corpus.flatMap((entry, row) =>
      results[row]!.map(({ anthropic: run }, index) => [
        entry.name.length > 50 ? `…${entry.name.slice(-47)}` : entry.name,
        names[index]!,
        k(run.governed),
        k(run.peak),
        run.overWindow,
        run.compactions,
        pct(run.retention),
        run.anchorsSeen === 0 ? "—" : `${run.anchorsKept}/${run.anchorsSeen}`,
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
      names.map((name, index) => ({ name, values: results[longest]![index]!.anthropic.perRequest })),
      CONTEXT_WINDOW,
    ),
  );

  const ctxkit = totals.find((total) => total.name === "ctxkit default")!;
  const aggressive = totals.find((total) => total.name === "ctxkit aggressive")!;
  const peers = totals.filter((total) => !total.name.startsWith("ctxkit") && total !== totals[0]);
  const bestPeerRetention = Math.max(...peers.map((peer) => peer.retentionAnthropic));
  const bestPeer = peers.find((peer) => peer.retentionAnthropic === bestPeerRetention)!;
  const verdict = (key: "costAnthropic" | "costOpenAI", label: string) => {
    const byCost = [...peers].sort((a, b) => a[key] - b[key]);
    const cheaper = byCost.filter((peer) => peer[key] < ctxkit[key]);
    if (cheaper.length === 0)
      return (
        `${label}: ctxkit default is the cheapest policy (${k(ctxkit[key])} units); the cheapest peer, ` +
        `${byCost[0]!.name}, costs ${pct(byCost[0]![key] / ctxkit[key] - 1)} more (${k(byCost[0]![key])}).`
      );
    return (
      `${label}: **${cheaper.map((peer) => `${peer.name} (${k(peer[key])} units, retention ${pct(peer.retentionAnthropic)})`).join(", ")} ` +
      `${cheaper.length === 1 ? "is" : "are"} cheaper** than ctxkit default (${k(ctxkit[key])}), ` +
      `by ${pct(1 - cheaper[0]![key] / ctxkit[key])}.`
    );
  };
  const ctxkitRetention = Math.min(ctxkit.retentionAnthropic, ctxkit.retentionOpenAI);
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
    "ctxkit's checkpoints weigh the provider's cache prices (the engine takes them from the model's provider), so " +
      "its policies are replayed once per price list: the Anthropic column from a replay priced for Anthropic, the " +
      "OpenAI column from one priced for OpenAI (retention is given for both). The peers decide the same way " +
      "whatever the prices and are replayed once. They are reimplemented from their documented behaviour " +
      "(DESIGN.md table, the co-cli and CowAgent seeds) as ctxkit processors in bench/policies/, run before every " +
      "request without ctxkit's safety nets (no pre-flight, no ingest cap); their absolute token budgets, set for " +
      `~200k windows, are scaled by ${CONTEXT_WINDOW / 1000}/200 (per-output caps are kept as documented). Requests ` +
      "over the window are counted, not refused, except CowAgent, which goes through its own overflow emergency.",
    "",
    "Two more columns, because cost and retention do not tell everything a policy gave up. **Summarizer input** " +
      "is what the policy handed its summarizer: free with the offline summarizer used here, but what an LLM " +
      `summarizer would read (and bill). **Edit anchors in view**: for each of the ${anchorsSeen} recorded edits ` +
      "(Claude Code's Edit and MultiEdit) whose replaced text the agent had seen, the share whose text was still " +
      "in the view the policy sent — otherwise the agent would have had to read the file again first, a request " +
      "an open-loop replay cannot see or price. It measures the working context a policy keeps; retention measures " +
      "the facts.",
    "",
    totalTable,
    "",
    `- ${verdict("costAnthropic", "Anthropic prices")}`,
    `- ${verdict("costOpenAI", "OpenAI prices (ctxkit priced for OpenAI)")}`,
    `- Retention: ctxkit default ${pct(ctxkit.retentionAnthropic)} priced for Anthropic, ` +
      `${pct(ctxkit.retentionOpenAI)} for OpenAI; best peer ${pct(bestPeerRetention)} (${bestPeer.name}) — ` +
      `${ctxkitRetention >= bestPeerRetention ? "no lower" : "**lower**"}.`,
    `- Edit anchors in view: ctxkit default ${pct(ctxkit.anchors)}; ${peers
      .map((peer) => `${peer.name} ${pct(peer.anchors)}`)
      .join(", ")}.`,
    `- The aggressive preset (\`preset("aggressive")\`): ${k(aggressive.costAnthropic)} / ` +
      `${k(aggressive.costOpenAI)} units (Anthropic / OpenAI) at retention ${retentionCell(aggressive)}, edit ` +
      `anchors ${pct(aggressive.anchors)}; peers cheaper than it at Anthropic prices: ${
        peers
          .filter((peer) => peer.costAnthropic < aggressive.costAnthropic)
          .map((peer) => `${peer.name} (${k(peer.costAnthropic)})`)
          .join("; ") || "none"
      }; at OpenAI prices: ${
        peers
          .filter((peer) => peer.costOpenAI < aggressive.costOpenAI)
          .map((peer) => `${peer.name} (${k(peer.costOpenAI)})`)
          .join("; ") || "none"
      }.`,
    "",
    `![Tokens per request, longest session](${CHART})`,
    "",
    "Per transcript (cost in thousands of units, Anthropic / OpenAI, and retention of the Anthropic-priced " +
      "replay; the last column is what the recorded agent really spent, from the usage in the transcript, when " +
      "it has any):",
    "",
    perTranscript,
    "",
    "<details><summary>Per transcript and policy (Anthropic-priced replays): input tokens, peak context, requests " +
      "over the window, compactions, retention, edit anchors kept</summary>",
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
