import { CtxkitError } from "../errors/ctxkit-error.ts";
import type { GovernanceEvent } from "../governance/events.ts";
import { createGovernor, type Governor, type GovernorOptions } from "../governance/governor.ts";
import type { Message } from "../model/message.ts";
import { cacheProfiles, type CacheProfile } from "../pricing/cache-profile.ts";
import type { SummarizerPrice } from "../summarize/summarizer.ts";
import type { BreakpointPlacement } from "./breakpoint-placement.ts";
import { eventLoopYielder } from "./event-loop-yielder.ts";
import { meteredSummarizer } from "./metered-summarizer.ts";
import { ReplayMeter, type MeteredRequest, type SummaryCall } from "./replay-meter.ts";

/** Scores how much of what governance changed is still visible (see DESIGN.md, Retention). */
export interface RetentionScorer {
  /** Called once per request with the full history so far and the governed view sent. */
  observe(history: readonly Message[], view: readonly Message[]): void;
  /** Mean retention over the requests that had any fact at stake (1 when none had). */
  mean(): number;
}

/** One replayed model request. */
export interface ReplayRequest {
  readonly index: number;
  /** When the request was sent (the recorded time of the last message before it), ms since the epoch. */
  readonly at: number;
  /** Tokens the request would have cost with no governance. */
  readonly rawTokens: number;
  readonly governedTokens: number;
  /** Governed tokens the provider's cache served (cache model: breakpoints, expiry). */
  readonly cachedTokens: number;
  /** Governed tokens written to the cache. */
  readonly cacheWriteTokens: number;
  /** The request's input cost, in units of the uncached input price. */
  readonly costUnits: number;
  /** What reading again the spans its reply used but the view lacked would have cost. */
  readonly rereadCostUnits: number;
  /** Share of the spans its recorded reply copied from context that the view still showed. */
  readonly grounding?: number;
  /** The spans the view lacked (at most 20), as `kind: text`. */
  readonly missing?: readonly string[];
  readonly events: readonly GovernanceEvent["type"][];
  /** The refused request's error code, when governance refused to send it. */
  readonly error?: string;
}

/** The cache model a replay was priced with. */
export interface ReplayCacheModel {
  readonly provider: CacheProfile["provider"];
  readonly model?: string;
  readonly read: number;
  readonly write: number;
  readonly output: number;
  readonly ttlSeconds: number;
  readonly minTokens: number;
  readonly breakpoints: BreakpointPlacement;
}

/** Totals of a replay. */
export interface ReplayTotals {
  readonly requests: number;
  readonly rawInputTokens: number;
  readonly governedInputTokens: number;
  readonly cachedInputTokens: number;
  readonly cacheWriteTokens: number;
  /** Governed input cost as run (an offline summarizer is free), in units of the uncached input price. */
  readonly costUnits: number;
  /** The same for the raw (ungoverned) requests, cached as the provider would. */
  readonly rawCostUnits: number;
  readonly summaryCalls: number;
  /** The summaries billed as LLM calls (the summarizing model's input and output prices). */
  readonly summarizerCostUnits: number;
  readonly rereads: number;
  readonly rereadCostUnits: number;
  /** The headline: `costUnits + summarizerCostUnits + rereadCostUnits`. */
  readonly costWithRereads: number;
  /** Mean next-step grounding over the requests whose reply copied something (1 when none did). */
  readonly grounding: number;
  /** Share of edit anchors (lines the recorded edits replaced) still in view. */
  readonly anchorsKept: number;
  readonly groundingWorst?: { readonly index: number; readonly score: number };
  readonly maxGovernedTokens: number;
  readonly maxRawTokens: number;
  readonly compactions: number;
  readonly refused: number;
  /** Keyword retention (DESIGN.md; secondary). */
  readonly retention: number;
  /** Tokens per request outside the messages (system prompt, tools), included in every figure above. */
  readonly fixedTokens: number;
  readonly cacheModel: ReplayCacheModel;
  /** What the recorded agent really spent, from the provider usage in the transcript (when it has any). */
  readonly recorded?: { readonly requests: number; readonly inputTokens: number; readonly costUnits: number };
}

/** Options of `replayConversation`. */
export interface ReplayOptions extends Omit<GovernorOptions, "onEvent"> {
  /** The provider cache that bills the requests. Default: Anthropic's reference profile. */
  readonly cache?: CacheProfile;
  /** Who placed Anthropic breakpoints. Default `ctxkit`. */
  readonly breakpoints?: BreakpointPlacement;
  /** Anthropic 1-hour cache entries. */
  readonly longTtl?: boolean;
  /** The summarizing model's prices, in units of the session model's input price (default: the same model). */
  readonly summaryPrices?: SummarizerPrice;
  readonly retention?: RetentionScorer;
  /**
   * Called with each governed request (e.g. to dump it), what it measured, and the governor's cache anchors
   * (indices in `view`; the replay priced breakpoints there).
   */
  readonly onRequest?: (
    index: number,
    view: readonly Message[],
    measured: MeteredRequest,
    cacheAnchors: readonly number[],
  ) => void | Promise<void>;
  readonly onProgress?: (done: number, total: number) => void;
  /**
   * Tokens of the system prompt and tools, which transcripts do not record. `recorded` (default) derives them
   * from the first request's reported usage minus the messages before it — the provider's number is the truth.
   */
  readonly fixedTokens?: number | "recorded";
}

/** The messages an agent really exchanged: no importer markers, no summaries made by the recorded agent. */
export function replayableMessages(messages: readonly Message[]): Message[] {
  return messages.filter((message) => message.kind === undefined);
}

/** What the recorded agent spent: its provider-reported input per request, priced with the cache ratios. */
export function recordedSpend(
  messages: readonly Message[],
  pricing: Pick<CacheProfile, "read" | "write" | "writeLong">,
): ReplayTotals["recorded"] {
  let requests = 0;
  let inputTokens = 0;
  let costUnits = 0;
  for (const message of messages) {
    if (message.role !== "assistant" || message.usage === undefined) continue;
    const { input, cacheRead = 0, cacheWrite = 0, cacheWriteLong = 0 } = message.usage;
    requests++;
    inputTokens += input;
    costUnits +=
      cacheRead * pricing.read +
      (cacheWrite - cacheWriteLong) * pricing.write +
      cacheWriteLong * pricing.writeLong +
      Math.max(0, input - cacheRead - cacheWrite);
  }
  return requests === 0 ? undefined : { requests, inputTokens, costUnits };
}

/** Indices of the messages that start a model reply: one request per assistant reply. */
export function requestPoints(messages: readonly Message[]): number[] {
  const points: number[] = [];
  messages.forEach((message, index) => {
    if (message.role !== "assistant" || index === 0) return;
    if (messages[index - 1]!.role === "assistant") return;
    points.push(index);
  });
  return points;
}

/** The recorded reply to the request made at `point`: the assistant messages from there on. */
export function recordedReply(messages: readonly Message[], point: number): Message[] {
  const reply: Message[] = [];
  for (let at = point; at < messages.length && messages[at]!.role === "assistant"; at++)
    reply.push(messages[at]!);
  return reply;
}

/**
 * When the request at `point` was sent: the recorded time of the message before it. Transcripts without times
 * (epoch 0) replay back to back.
 */
export function requestTime(messages: readonly Message[], point: number): number {
  return timeOf(messages[point - 1]);
}

/** When the reply to the request at `point` arrived (the provider keeps what it cached for its TTL from then). */
export function replyTime(messages: readonly Message[], point: number): number {
  return Math.max(requestTime(messages, point), timeOf(messages[point]));
}

function timeOf(message: Message | undefined): number {
  const time = Date.parse(message?.createdAt ?? "");
  return Number.isFinite(time) ? time : 0;
}

/** One request of a governed replay: what was sent, around what the recorded agent lived. */
export interface GovernedStep {
  readonly index: number;
  /** When it was sent, and when its reply arrived (ms since the epoch; 0 when the transcript has no times). */
  readonly at: number;
  readonly refreshedAt: number;
  /**
   * Every message before the request, and the recorded reply to it. `history` is one array for the whole
   * replay, grown at its end between steps (as the governor takes it), so a step costs what it added, not a
   * copy of the history: read it during the step, copy it to keep it.
   */
  readonly history: readonly Message[];
  readonly reply: readonly Message[];
  /** Tokens of a request with no governance (system prompt and tools included). */
  readonly rawTokens: number;
  /** The governed messages sent; undefined when governance refused the request. */
  readonly view?: readonly Message[];
  /** Where the governor asked for cache breakpoints besides the newest messages (`GovernedRequest.cacheAnchors`). */
  readonly cacheAnchors?: readonly number[];
  /** Their tokens with the system prompt and tools. */
  readonly governedTokens: number;
  /** True when governance rewrote history already sent (a checkpoint). */
  readonly checkpoint: boolean;
  readonly events: readonly GovernanceEvent["type"][];
  /** The same events in full. */
  readonly eventDetails: readonly GovernanceEvent[];
  /** The refused request's error code. */
  readonly error?: string;
}

/** Options of `governedReplay`. */
export interface GovernedReplayOptions extends Omit<GovernorOptions, "onEvent"> {
  /** Told of every summary the governor asked for, as the LLM call it would have been. */
  readonly onSummary?: (call: SummaryCall) => void;
  /** See `ReplayOptions.fixedTokens`. */
  readonly fixedTokens?: number | "recorded";
}

/**
 * The requests of a recorded conversation passed through a governor, one per recorded assistant reply, with the
 * times and replies a meter needs. `fixedTokens` (the system prompt and tools) are resolved once, before the
 * first step, and reported by `fixed()`. The steps give the event loop a turn whenever ~15 ms of work (theirs and
 * the caller's between them) have passed, so a server replaying a big session keeps answering its other clients.
 *
 * @example
 * const replay = governedReplay(messages, { contextWindow, counter, summarizer });
 * for await (const step of replay.steps) meter.request({ ...step, fixed: replay.fixed(), view: step.view ?? [] });
 */
export function governedReplay(
  transcript: readonly Message[],
  options: GovernedReplayOptions,
): { governor: Governor; fixed: { identity: string; tokens: number }; steps: AsyncGenerator<GovernedStep> } {
  const messages = replayableMessages(transcript);
  let events: GovernanceEvent[] = [];
  const summarizer =
    options.onSummary === undefined
      ? options.summarizer
      : meteredSummarizer(options.summarizer, options.counter, options.onSummary);
  // The governor lives the recorded session's time: its cache arithmetic knows when the cache expired.
  let now = 0;
  const governor = createGovernor({
    clock: () => new Date(now),
    ...options,
    summarizer,
    onEvent: (event) => events.push(event),
  });
  const points = requestPoints(messages);
  const fixedTokens =
    typeof options.fixedTokens === "number"
      ? options.fixedTokens
      : recordedFixedTokens(messages, points, governor.tokensOf);
  async function* steps(): AsyncGenerator<GovernedStep> {
    let rawRunning = 0;
    const history: Message[] = [];
    const breathe = eventLoopYielder();
    for (const [index, end] of points.entries()) {
      await breathe();
      for (let next = history.length; next < end; next++) {
        history.push(messages[next]!);
        rawRunning += governor.tokensOf(messages[next]!);
      }
      const common = {
        index,
        at: requestTime(messages, end),
        refreshedAt: replyTime(messages, end),
        history,
        reply: recordedReply(messages, end),
        rawTokens: fixedTokens + rawRunning,
      };
      events = [];
      now = common.at;
      let outcome: Pick<GovernedStep, "view" | "governedTokens" | "checkpoint" | "cacheAnchors" | "error">;
      try {
        const request = await governor.prepare(common.history, { fixedTokens });
        outcome = {
          view: request.messages,
          governedTokens: request.tokens.total,
          checkpoint: request.checkpoint,
          ...(request.cacheAnchors !== undefined && { cacheAnchors: request.cacheAnchors }),
        };
      } catch (error) {
        if (!CtxkitError.isInstance(error)) throw error;
        outcome = { governedTokens: 0, checkpoint: false, error: error.code };
      }
      governor.recordSuccess();
      yield { ...common, ...outcome, events: events.map((event) => event.type), eventDetails: events };
    }
  }
  return {
    governor,
    fixed: { identity: "recorded system prompt and tools", tokens: fixedTokens },
    steps: steps(),
  };
}

/**
 * Replays a recorded conversation as the agent lived it: one model request per assistant reply, the history so
 * far passed through governance. Each request is priced by the provider's prompt-cache model (breakpoints,
 * expiry from the recorded times), each summary as the LLM call it would be, and each request is scored for
 * next-step grounding against the reply the recorded agent gave — with the re-reads a missing span would have
 * cost. The same history ungoverned is priced beside it.
 *
 * @example
 * const { totals } = await replayConversation(conversation.messages, { contextWindow: 200_000, counter, summarizer });
 */
export async function replayConversation(
  transcript: readonly Message[],
  options: ReplayOptions,
): Promise<{ requests: ReplayRequest[]; totals: ReplayTotals }> {
  const cache = options.cache ?? cacheProfiles.anthropic;
  const meterOptions = {
    cache,
    // The governor counts each message once; the meters share its cache.
    tokensOf: (message: Message) => replay.governor.tokensOf(message),
    ...(options.breakpoints !== undefined && { breakpoints: options.breakpoints }),
    ...(options.longTtl !== undefined && { longTtl: options.longTtl }),
    ...(options.summaryPrices !== undefined && { summaryPrices: options.summaryPrices }),
  };
  const meter = new ReplayMeter(meterOptions);
  const rawMeter = new ReplayMeter({ ...meterOptions, grounding: false });
  const replay = governedReplay(transcript, { ...options, onSummary: (call) => meter.summary(call) });
  const { fixed } = replay;
  const requests: ReplayRequest[] = [];
  const totals = { maxGovernedTokens: 0, maxRawTokens: 0, compactions: 0, refused: 0 };
  const total = requestPoints(replayableMessages(transcript)).length;
  let rawLength = 0;
  for await (const step of replay.steps) {
    const { index, at, refreshedAt, history, reply, rawTokens, events } = step;
    totals.maxRawTokens = Math.max(totals.maxRawTokens, rawTokens);
    // The ungoverned request is the history, which only grows: its meter need not compare what it had.
    rawMeter.request({ at, refreshedAt, fixed, history, view: history, reply, unchanged: rawLength });
    rawLength = history.length;
    if (step.view === undefined) {
      totals.refused++;
      requests.push({
        index,
        at,
        rawTokens,
        governedTokens: 0,
        cachedTokens: 0,
        cacheWriteTokens: 0,
        costUnits: 0,
        rereadCostUnits: 0,
        events,
        ...(step.error !== undefined && { error: step.error }),
      });
    } else {
      const measured = meter.request({
        at,
        refreshedAt,
        fixed,
        history,
        view: step.view,
        reply,
        ...(step.cacheAnchors !== undefined && { anchors: step.cacheAnchors }),
      });
      totals.maxGovernedTokens = Math.max(totals.maxGovernedTokens, step.governedTokens);
      totals.compactions += events.filter((type) => type === "compaction-end").length;
      options.retention?.observe(history, step.view);
      await options.onRequest?.(index, step.view, measured, step.cacheAnchors ?? []);
      const grounding = measured.grounding;
      requests.push({
        index,
        at,
        rawTokens,
        governedTokens: step.governedTokens,
        cachedTokens: measured.bill.cacheRead,
        cacheWriteTokens: measured.bill.cacheWrite,
        costUnits: measured.bill.costUnits,
        rereadCostUnits: measured.rereadCostUnits,
        ...(grounding?.score !== undefined && { grounding: grounding.score }),
        ...(grounding !== undefined &&
          grounding.missing.length > 0 && {
            missing: grounding.missing.slice(0, 20).map(({ span }) => `${span.kind}: ${span.text}`),
          }),
        events,
      });
    }
    options.onProgress?.(index + 1, total);
  }
  const metered = meter.totals;
  const grounding = meter.grounding!.totals;
  const recorded = recordedSpend(transcript, cache);
  return {
    requests,
    totals: {
      requests: requests.length,
      rawInputTokens: rawMeter.totals.inputTokens,
      governedInputTokens: metered.inputTokens,
      cachedInputTokens: metered.cacheReadTokens,
      cacheWriteTokens: metered.cacheWriteTokens,
      costUnits: metered.costUnits,
      rawCostUnits: rawMeter.totals.costUnits,
      summaryCalls: metered.summaryCalls,
      summarizerCostUnits: metered.summarizerCostUnits,
      rereads: metered.rereads,
      rereadCostUnits: metered.rereadCostUnits,
      costWithRereads: metered.costWithRereads,
      grounding: grounding.mean,
      anchorsKept: grounding.anchorShare,
      ...(grounding.worst !== undefined && { groundingWorst: grounding.worst }),
      ...totals,
      retention: options.retention?.mean() ?? 1,
      fixedTokens: fixed.tokens,
      cacheModel: {
        provider: cache.provider,
        ...(cache.model !== undefined && { model: cache.model }),
        read: cache.read,
        write: options.longTtl === true ? cache.writeLong : cache.write,
        output: cache.output,
        ttlSeconds: (options.longTtl === true ? cache.longTtlMs : cache.ttlMs) / 1000,
        minTokens: cache.minTokens,
        breakpoints: options.breakpoints ?? "ctxkit",
      },
      ...(recorded !== undefined && { recorded }),
    },
  };
}

/**
 * The system prompt and tools of a recorded conversation, which transcripts do not record: the first request's
 * reported input minus the messages before it (the provider's number is the truth). 0 without usage. With
 * `usableWindow`, also 0 when it would take more than a quarter of it (the bench's policy runs, which compare
 * histories alone at small windows); a replay keeps it whatever the window, since every request carries it.
 *
 * @example
 * recordedFixedTokens(messages, requestPoints(messages), governor.tokensOf)
 */
export function recordedFixedTokens(
  messages: readonly Message[],
  points: readonly number[],
  tokensOf: (message: Message) => number,
  usableWindow = Number.POSITIVE_INFINITY,
): number {
  const first = points[0] === undefined ? undefined : messages[points[0]];
  if (first?.usage === undefined) return 0;
  let before = 0;
  for (const message of messages.slice(0, points[0])) before += tokensOf(message);
  const fixed = Math.max(0, first.usage.input - before);
  return fixed > 0.25 * usableWindow ? 0 : fixed;
}
