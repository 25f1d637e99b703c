// Section 2: token counting — throughput of ctxkit's counting path against raw gpt-tokenizer, and how many
// tokenizer calls each request of a long session makes.
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { createGovernor } from "../src/governance/governor.ts";
import { toolResultText } from "../src/model/blocks.ts";
import type { Message } from "../src/model/message.ts";
import { requestPoints } from "../src/replay/replay.ts";
import { createExtractiveSummarizer } from "../src/summarize/index.ts";
import { createExactCounter } from "../src/tokens/exact-counter.ts";
import { CountingTokenCounter, TokenCache } from "../src/tokens/token-cache.ts";
import type { TokenCounter } from "../src/tokens/token-counter.ts";
import type { BenchSection } from "./run.ts";
import { sharedCorpus } from "./support/corpus.ts";
import { formatRatio, markdownTable, since } from "./support/stats.ts";

/** Window of the per-request replay: small enough that the long session is governed (compactions). */
const REPLAY_WINDOW = 64_000;
const NO_SPECIAL = { disallowedSpecial: new Set<string>() };

/** Every text a message is billed for (text, reasoning, tool input, tool output). */
function textsOf(message: Message): string[] {
  const texts: string[] = [];
  for (const block of message.content) {
    if (block.type === "text" || block.type === "reasoning") texts.push(block.text);
    else if (block.type === "tool-call") texts.push(block.name, JSON.stringify(block.input));
    else if (block.type === "tool-result") texts.push(toolResultText(block.content));
  }
  return texts;
}

function throughput(label: string, tokens: number, ms: number, rawRate: number): (string | number)[] {
  const rate = tokens / (ms / 1000);
  return [label, Math.round(ms), `${(rate / 1e6).toFixed(2)} M tokens/s`, formatRatio(rate / rawRate)];
}

/** A counter that records which message objects it tokenised and how often. */
class RecordingCounter extends CountingTokenCounter {
  readonly seen = new WeakMap<Message, number>();
  recounted = 0;
  override countMessage(message: Message): number {
    const times = (this.seen.get(message) ?? 0) + 1;
    this.seen.set(message, times);
    if (times > 1) this.recounted++;
    return super.countMessage(message);
  }
}

async function callsPerRequest(messages: readonly Message[], base: TokenCounter) {
  const counter = new RecordingCounter(base);
  const governor = createGovernor({
    contextWindow: REPLAY_WINDOW,
    counter,
    summarizer: createExtractiveSummarizer({ counter: base }),
  });
  const points = requestPoints(messages);
  let previousEnd = 0;
  let historyCalls = 0;
  let maxCalls = 0;
  let maxNew = 0;
  let idleCalls = 0;
  let compactions = 0;
  const history = new Set<Message>();
  for (const end of points) {
    const slice = messages.slice(0, end);
    for (const message of slice.slice(previousEnd)) history.add(message);
    const before = counter.messageCalls;
    const request = await governor.prepare(slice);
    compactions += request.events.filter((event) => event.type === "compaction-end").length;
    const calls = counter.messageCalls - before;
    const fresh = end - previousEnd;
    maxCalls = Math.max(maxCalls, calls);
    maxNew = Math.max(maxNew, fresh);
    // Re-preparing the same history (a retry) must tokenise nothing.
    const idle = counter.messageCalls;
    await governor.prepare(slice);
    idleCalls += counter.messageCalls - idle;
    previousEnd = end;
  }
  for (const message of history) if (counter.seen.has(message)) historyCalls++;
  const governanceCalls = counter.messageCalls - historyCalls;
  return {
    requests: points.length,
    historyMessages: history.size,
    historyCalls,
    governanceCalls,
    recounted: counter.recounted,
    idleCalls,
    maxCalls,
    maxNew,
    compactions,
    totalCalls: counter.messageCalls,
  };
}

/** Section 2 of the benchmark issue. */
export default async function tokenCounting(): Promise<BenchSection> {
  const counter = await createExactCounter("o200k_base");
  const corpus = await sharedCorpus(counter);
  const pool = corpus.flatMap((entry) => entry.messages);
  const texts = pool.flatMap(textsOf);

  // Two rounds, alternating the paths, best time of each: the first pass of any path pays for JIT warm-up.
  const fresh = () => pool.map((message) => ({ ...message }));
  let rawMs = Infinity;
  let counterMs = Infinity;
  let firstPassMs = Infinity;
  let secondPassMs = Infinity;
  let rawTokens = 0;
  let messageTokens = 0;
  for (let round = 0; round < 2; round++) {
    let started = performance.now();
    rawTokens = 0;
    for (const text of texts) rawTokens += text === "" ? 0 : countTokens(text, NO_SPECIAL);
    rawMs = Math.min(rawMs, since(started));

    const copies = fresh();
    started = performance.now();
    messageTokens = 0;
    for (const message of copies) messageTokens += counter.countMessage(message);
    counterMs = Math.min(counterMs, since(started));

    const cache = new TokenCache(counter);
    const cached = fresh();
    started = performance.now();
    cache.total(cached);
    firstPassMs = Math.min(firstPassMs, since(started));
    started = performance.now();
    cache.total(cached);
    secondPassMs = Math.min(secondPassMs, since(started));
  }
  const rawRate = rawTokens / (rawMs / 1000);

  const longest = corpus.reduce((a, b) => (b.tokens > a.tokens ? b : a));
  const calls = await callsPerRequest(longest.messages, counter);

  const table = markdownTable(
    ["counting path (whole corpus, best of 2 passes)", "ms", "throughput", "vs raw"],
    [
      throughput("raw gpt-tokenizer `countTokens` on every text (the limit)", rawTokens, rawMs, rawRate),
      throughput(
        "ctxkit exact counter `countMessage` (texts + chat framing)",
        messageTokens,
        counterMs,
        rawRate,
      ),
      throughput("ctxkit `TokenCache`, first sight of every message", messageTokens, firstPassMs, rawRate),
      throughput("ctxkit `TokenCache`, every message seen before", messageTokens, secondPassMs, rawRate),
    ],
  );
  const perRequest = markdownTable(
    ["tokenizer calls over the session", "value"],
    [
      ["requests", calls.requests],
      ["history messages", calls.historyMessages],
      ["history messages tokenised (each at most once)", calls.historyCalls],
      [
        "messages governance created and tokenised (summaries, truncated outputs, notices)",
        calls.governanceCalls,
      ],
      ["messages tokenised more than once", calls.recounted],
      ["calls when the same request is prepared again (no new message)", calls.idleCalls],
      ["most calls in one request / most new messages in one request", `${calls.maxCalls} / ${calls.maxNew}`],
      ["compactions", calls.compactions],
    ],
  );
  const met = calls.recounted === 0 && calls.idleCalls === 0 && calls.historyCalls <= calls.historyMessages;
  const markdown = [
    `Corpus: ${pool.length.toLocaleString("en-US")} messages of every main conversation in ../shared/data/transcripts, ` +
      `${texts.length.toLocaleString("en-US")} texts, ${rawTokens.toLocaleString("en-US")} tokens (o200k_base). ` +
      "The ctxkit counter adds OpenAI's chat framing per message and per tool call/result, so it reports a few " +
      "more tokens than the raw texts; throughput is computed on each path's own total.",
    "",
    table,
    "",
    `Tokenizer calls per request, replaying the longest session (${longest.name}, ${longest.messages.length} ` +
      `messages) through a Governor with a ${REPLAY_WINDOW.toLocaleString("en-US")}-token window and a counter that ` +
      "wraps the real one and records every message it tokenises:",
    "",
    perRequest,
    "",
    `**Only new messages are tokenised: ${met ? "met" : "**not met**"}** — every history message at most once, ` +
      "nothing recounted, nothing on a repeated request; the other calls are for messages governance itself made.",
  ];
  return {
    title: "2. Token counting",
    goal: "ctxkit's counting path close to raw gpt-tokenizer, and only new messages are ever tokenised.",
    markdown: markdown.join("\n"),
  };
}
