import { CtxkitError } from "../errors/ctxkit-error.ts";
import { cachePricing } from "../governance/cache-economics.ts";
import type { GovernanceEvent } from "../governance/events.ts";
import { createGovernor, type GovernorOptions } from "../governance/governor.ts";
import type { Message } from "../model/message.ts";
import { PrefixCache } from "./prefix-cache.ts";

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
  /** Tokens the request would have cost with no governance. */
  readonly rawTokens: number;
  readonly governedTokens: number;
  /** Governed tokens served from the provider's prompt cache (longest identical prefix with the previous). */
  readonly cachedTokens: number;
  readonly events: readonly GovernanceEvent["type"][];
  /** The refused request's error code, when governance refused to send it. */
  readonly error?: string;
}

/** Totals of a replay. */
export interface ReplayTotals {
  readonly requests: number;
  readonly rawInputTokens: number;
  readonly governedInputTokens: number;
  readonly cachedInputTokens: number;
  /** Input cost in units of the uncached input price, governed. */
  readonly costUnits: number;
  /** The same for the raw (ungoverned) requests, cached as a provider would. */
  readonly rawCostUnits: number;
  readonly maxGovernedTokens: number;
  readonly maxRawTokens: number;
  readonly compactions: number;
  readonly refused: number;
  readonly retention: number;
  /** Tokens per request outside the messages (system prompt, tools), included in every figure above. */
  readonly fixedTokens: number;
  /** What the recorded agent really spent, from the provider usage in the transcript (when it has any). */
  readonly recorded?: { readonly requests: number; readonly inputTokens: number; readonly costUnits: number };
}

/** Options of `replayConversation`. */
export interface ReplayOptions extends Omit<GovernorOptions, "onEvent"> {
  readonly pricing?: keyof typeof cachePricing;
  readonly retention?: RetentionScorer;
  /** Called with each governed request (e.g. to dump it). */
  readonly onRequest?: (index: number, view: readonly Message[]) => void | Promise<void>;
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
  pricing: { read: number; write: number },
): ReplayTotals["recorded"] {
  let requests = 0;
  let inputTokens = 0;
  let costUnits = 0;
  for (const message of messages) {
    if (message.role !== "assistant" || message.usage === undefined) continue;
    const { input, cacheRead = 0, cacheWrite = 0 } = message.usage;
    requests++;
    inputTokens += input;
    costUnits +=
      cacheRead * pricing.read + cacheWrite * pricing.write + Math.max(0, input - cacheRead - cacheWrite);
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

/**
 * Replays a recorded conversation as the agent lived it: one model request per assistant reply, the history so
 * far passed through governance. Reports, per request, raw and governed tokens and what the prompt cache would
 * have served, and totals with cache-weighted cost.
 *
 * @example
 * const { totals } = await replayConversation(conversation.messages, { contextWindow: 200_000, counter, summarizer });
 */
export async function replayConversation(
  transcript: readonly Message[],
  options: ReplayOptions,
): Promise<{ requests: ReplayRequest[]; totals: ReplayTotals }> {
  const messages = replayableMessages(transcript);
  const pricing = cachePricing[options.pricing ?? "anthropic"];
  let events: GovernanceEvent["type"][] = [];
  const governor = createGovernor({ ...options, onEvent: (event) => events.push(event.type) });
  const governedCache = new PrefixCache();
  const requests: ReplayRequest[] = [];
  const points = requestPoints(messages);
  let rawRunning = 0;
  let rawCounted = 0;
  let previousRawTokens = 0;
  const totals = {
    rawInputTokens: 0,
    governedInputTokens: 0,
    cachedInputTokens: 0,
    costUnits: 0,
    rawCostUnits: 0,
    maxGovernedTokens: 0,
    maxRawTokens: 0,
    compactions: 0,
    refused: 0,
  };
  let fixed = typeof options.fixedTokens === "number" ? options.fixedTokens : 0;
  if (options.fixedTokens === undefined || options.fixedTokens === "recorded") {
    const first = points[0] === undefined ? undefined : messages[points[0]];
    if (first?.usage) {
      let before = 0;
      for (const message of messages.slice(0, points[0])) before += governor.tokensOf(message);
      fixed = Math.max(0, first.usage.input - before);
      // The recorded agent's own system prompt may not fit a smaller window chosen for the replay: leave it out.
      if (fixed > 0.25 * (options.contextWindow - governor.window.reservedOutput)) fixed = 0;
    }
  }
  for (const [index, end] of points.entries()) {
    const history = messages.slice(0, end);
    for (; rawCounted < end; rawCounted++) rawRunning += governor.tokensOf(messages[rawCounted]!);
    const rawTokens = fixed + rawRunning;
    // Ungoverned history only grows at its end: the previous request is entirely a cached prefix.
    const rawCachedTokens = previousRawTokens;
    previousRawTokens = rawTokens;
    totals.rawInputTokens += rawTokens;
    totals.maxRawTokens = Math.max(totals.maxRawTokens, rawTokens);
    totals.rawCostUnits += rawCachedTokens * pricing.read + (rawTokens - rawCachedTokens) * pricing.write;
    events = [];
    try {
      const request = await governor.prepare(history, { fixedTokens: fixed });
      const common = governedCache.observe(request.messages);
      // The system prompt and tools open every request: after the first, the provider serves them from cache.
      let cachedTokens = index === 0 ? 0 : fixed;
      for (let position = 0; position < common; position++)
        cachedTokens += governor.tokensOf(request.messages[position]!);
      const governedTokens = request.tokens.total;
      totals.governedInputTokens += governedTokens;
      totals.cachedInputTokens += cachedTokens;
      totals.costUnits += cachedTokens * pricing.read + (governedTokens - cachedTokens) * pricing.write;
      totals.maxGovernedTokens = Math.max(totals.maxGovernedTokens, governedTokens);
      totals.compactions += events.filter((type) => type === "compaction-end").length;
      options.retention?.observe(history, request.messages);
      await options.onRequest?.(index, request.messages);
      requests.push({ index, rawTokens, governedTokens, cachedTokens, events });
    } catch (error) {
      if (!CtxkitError.isInstance(error)) throw error;
      totals.refused++;
      requests.push({ index, rawTokens, governedTokens: 0, cachedTokens: 0, events, error: error.code });
    }
    governor.recordSuccess();
    options.onProgress?.(index + 1, points.length);
  }
  const recorded = recordedSpend(transcript, pricing);
  return {
    requests,
    totals: {
      requests: requests.length,
      ...totals,
      retention: options.retention?.mean() ?? 1,
      fixedTokens: fixed,
      ...(recorded !== undefined && { recorded }),
    },
  };
}
