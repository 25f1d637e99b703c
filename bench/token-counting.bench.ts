// Section 2: token counting — throughput of ctxkit's counting path against raw gpt-tokenizer, how many
// tokenizer calls each request of a long session makes, and whether counting stays linear on any content.
import { readdir, readFile } from "node:fs/promises";
import { clearMergeCache, countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { createGovernor } from "../src/governance/governor.ts";
import { toolResultText } from "../src/model/blocks.ts";
import type { Message } from "../src/model/message.ts";
import { requestPoints } from "../src/replay/replay.ts";
import { createExtractiveSummarizer } from "../src/summarize/index.ts";
import { MAX_RUN } from "../src/tokens/bounded-pieces.ts";
import { createExactCounter } from "../src/tokens/exact-counter.ts";
import { CountingTokenCounter, TokenCache } from "../src/tokens/token-cache.ts";
import type { TokenCounter } from "../src/tokens/token-counter.ts";
import type { BenchSection } from "./run.ts";
import { sharedCorpus } from "./support/corpus.ts";
import { formatMs, formatRatio, markdownTable, since } from "./support/stats.ts";

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

/** Input sizes of the linearity measurement, in characters: each 4× the one before. */
const LINEAR_SIZES = [64 * 1024, 256 * 1024, 1024 * 1024];
/** Goal: 4× the input costs at most this many times the time. */
const LINEAR_GOAL = 4.5;

/** Deterministic pseudo-random text over `alphabet` (a linear congruential generator). */
function randomText(length: number, alphabet: string, seed: number): string {
  let state = seed;
  const characters: string[] = [];
  for (let index = 0; index < length; index++) {
    state = (state * 1_103_515_245 + 12_345) & 0x7fffffff;
    characters.push(alphabet[state % alphabet.length]!);
  }
  return characters.join("");
}

/**
 * `length` characters of `source` (repeated when shorter), taken as 16 equal slices spread evenly over it, so
 * every size holds the same mix of the source's content (its start alone may be easier or harder than the rest).
 */
function sized(source: string, length: number): string {
  const whole = source.repeat(Math.ceil(length / source.length));
  const slice = Math.ceil(length / 16);
  const stride = Math.floor((whole.length - slice) / 15);
  let text = "";
  for (let index = 0; index < 16; index++) text += whole.slice(index * stride, index * stride + slice);
  return text.slice(0, length);
}

/** Every TypeScript source file of the repository, concatenated: real code. */
async function repositoryCode(): Promise<string> {
  const root = new URL("../src/", import.meta.url);
  const files = (await readdir(root, { recursive: true })).filter((file) => file.endsWith(".ts")).sort();
  const texts = await Promise.all(files.map((file) => readFile(new URL(file, root), "utf8")));
  return texts.join("\n");
}

/** CPU time of this process spent in `work`, in milliseconds (other processes on a busy machine do not count). */
function cpuMs(work: () => unknown): number {
  const started = process.cpuUsage();
  work();
  const spent = process.cpuUsage(started);
  return (spent.user + spent.system) / 1000;
}

/**
 * CPU time of counting `text` with a fresh counter and gpt-tokenizer's merge cache emptied (no help from
 * before). CPU time rather than wall time: other processes would lengthen long runs more than short ones.
 */
async function coldCountMs(text: string): Promise<number> {
  const counter = await createExactCounter("o200k_base");
  clearMergeCache();
  return cpuMs(() => counter.countText(text));
}

/**
 * Best of 7 cold counts of each text, the texts taken in turn in every round: the machine's load then weighs
 * on every size alike, and every size gets the same number of tries.
 */
async function bestColdCountMs(texts: readonly string[]): Promise<number[]> {
  const best = texts.map(() => Infinity);
  for (let round = 0; round < 7; round++) {
    for (const [index, text] of texts.entries())
      best[index] = Math.min(best[index]!, await coldCountMs(text));
  }
  return best;
}

/** Counting time of each kind of content at each size, and the growth from one size to the next (4×). */
async function linearity(prose: string): Promise<{ table: string; met: boolean; before: string }> {
  const code = await repositoryCode();
  const base64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const kinds: [string, (length: number) => string][] = [
    ["one character repeated (`a`)", (length) => "a".repeat(length)],
    ["one character repeated (space)", (length) => " ".repeat(length)],
    ["prose (the corpus's user and assistant texts)", (length) => sized(prose, length)],
    ["code (this repository's TypeScript)", (length) => sized(code, length)],
    ["base64 of random bytes", (length) => randomText(length, base64Alphabet, 11)],
    [
      "random letters without spaces (one endless word)",
      (length) => randomText(length, "abcdefghijklmnopqrstuvwxyz", 13),
    ],
  ];
  let met = true;
  const rows: (string | number)[][] = [];
  for (const [label, make] of kinds) {
    const times = await bestColdCountMs(LINEAR_SIZES.map(make));
    const growth = times.slice(1).map((ms, index) => ms / times[index]!);
    const worst = Math.max(...growth);
    met &&= worst <= LINEAR_GOAL;
    rows.push([
      label,
      ...times.map(formatMs),
      ...growth.map(formatRatio),
      worst <= LINEAR_GOAL ? "yes" : "**no**",
    ]);
  }
  // For contrast, gpt-tokenizer alone on one repeated character (what ctxkit called before): quadratic.
  const rawMs = [16 * 1024, 64 * 1024].map((length) => {
    const text = "a".repeat(length);
    clearMergeCache();
    return cpuMs(() => countTokens(text, NO_SPECIAL));
  });
  const before =
    `For contrast, gpt-tokenizer counting one repeated character whole (ctxkit before): ` +
    `${formatMs(rawMs[0]!)} for 16 Ki characters, ${formatMs(rawMs[1]!)} for 64 Ki (${formatRatio(rawMs[1]! / rawMs[0]!)} ` +
    "the time for 4× the input).";
  const sizes = LINEAR_SIZES.map((size) => `${size / 1024} Ki`);
  const table = markdownTable(
    [
      "content (o200k_base, CPU time, best of 7 cold runs)",
      ...sizes,
      `${sizes[0]} → ${sizes[1]}`,
      `${sizes[1]} → ${sizes[2]}`,
      `≤ ${LINEAR_GOAL}×`,
    ],
    rows,
  );
  return { table, met, before };
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
    // Fresh counters: a counter remembers the counts of long texts, which would flatter a later pass.
    const roundCounter = await createExactCounter("o200k_base");
    let started = performance.now();
    rawTokens = 0;
    for (const text of texts) rawTokens += text === "" ? 0 : countTokens(text, NO_SPECIAL);
    rawMs = Math.min(rawMs, since(started));

    const copies = fresh();
    started = performance.now();
    messageTokens = 0;
    for (const message of copies) messageTokens += roundCounter.countMessage(message);
    counterMs = Math.min(counterMs, since(started));

    const cache = new TokenCache(await createExactCounter("o200k_base"));
    const cached = fresh();
    started = performance.now();
    cache.total(cached);
    firstPassMs = Math.min(firstPassMs, since(started));
    started = performance.now();
    cache.total(cached);
    secondPassMs = Math.min(secondPassMs, since(started));
  }
  const rawRate = rawTokens / (rawMs / 1000);

  const prose = pool
    .filter((message) => message.role === "user" || message.role === "assistant")
    .flatMap((message) => message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])))
    .join("\n\n");
  const linear = await linearity(prose);

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
    `**Only new messages are tokenised: ${met ? "met" : "not met"}** — every history message at most once, ` +
      "nothing recounted, nothing on a repeated request; the other calls are for messages governance itself made.",
    "",
    `Counting time by content and size (characters), each size 4× the one before; prose and code are 16 slices ` +
      `spread over their source (prose: ${prose.length.toLocaleString("en-US")} characters, repeated when ` +
      `shorter). A run without a safe cut is counted in pieces of ${MAX_RUN.toLocaleString("en-US")} characters ` +
      "(at most one token off per piece); everything else exactly as gpt-tokenizer counts it whole:",
    "",
    linear.table,
    "",
    linear.before,
    "",
    `**4× the input costs ≤ ${LINEAR_GOAL}× the time, whatever the content: ${linear.met ? "met" : "not met"}**`,
  ];
  return {
    title: "2. Token counting",
    goal:
      "ctxkit's counting path close to raw gpt-tokenizer, only new messages are ever tokenised, and counting is " +
      `linear whatever the content: 4× the input costs ≤ ${LINEAR_GOAL}× the time.`,
    markdown: markdown.join("\n"),
  };
}
