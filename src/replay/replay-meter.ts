import type { Message } from "../model/message.ts";
import { GroundingTracker, type GroundingObservation } from "../metrics/grounding.ts";
import type { CacheProfile } from "../pricing/cache-profile.ts";
import type { SummarizerPrice } from "../summarize/summarizer.ts";
import { fixedSegment, messageSegment } from "../pricing/payload-segments.ts";
import { PromptCache, type CacheBill, type PayloadSegment } from "../pricing/prompt-cache.ts";
import { breakpointIndices, ephemeral, type BreakpointPlacement } from "./breakpoint-placement.ts";

/** Tokens of the extra model call that asks for a re-read (the tool call it writes, and its framing). */
const REREAD_CALL_TOKENS = 60;

/** What `ReplayMeter.request` measured of one request. */
export interface MeteredRequest {
  readonly bill: CacheBill;
  /** Present when the meter scores grounding and the request had a reply. */
  readonly grounding?: GroundingObservation;
  /** What getting the missing spans back would cost: 0 when nothing was missing. */
  readonly rereadCostUnits: number;
}

/** One summarizer call, as an LLM summarizer would have made it. */
export interface SummaryCall {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

/** Options of `ReplayMeter`. */
export interface ReplayMeterOptions {
  /** The provider cache that bills the requests. */
  readonly cache: CacheProfile;
  /** Who placed Anthropic breakpoints: ctxkit (default) or a client that marks only system and newest message. */
  readonly breakpoints?: BreakpointPlacement;
  /** Anthropic 1-hour cache entries. */
  readonly longTtl?: boolean;
  /**
   * The summarizing model's prices per token read and written, in units of the session model's uncached input
   * price. Default: the session's own model (input 1, output at its output price).
   */
  readonly summaryPrices?: SummarizerPrice;
  /** Tokens of one message (cached by the caller). */
  readonly tokensOf: (message: Message) => number;
  /** Score next-step grounding (default true). */
  readonly grounding?: boolean;
}

/** What a replay cost and kept, totalled by `ReplayMeter`. */
export interface MeterTotals {
  readonly requests: number;
  readonly inputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
  /** The requests' input, billed by the cache model: what the run cost with a free (offline) summarizer. */
  readonly costUnits: number;
  readonly summaryCalls: number;
  readonly summaryInputTokens: number;
  readonly summaryOutputTokens: number;
  /** The summaries billed as LLM calls at the summarizing model's prices (uncached input, output). */
  readonly summarizerCostUnits: number;
  /** One extra request per request that lacked a span its reply used, plus the outputs read again. */
  readonly rereadCostUnits: number;
  readonly rereads: number;
  /** `costUnits + summarizerCostUnits + rereadCostUnits`: the headline cost. */
  readonly costWithRereads: number;
}

/**
 * Prices and scores a sequence of governed requests the way a provider bills them and an agent uses them: each
 * request through the provider's prompt-cache model (breakpoints, expiry), each summarizer call as an LLM call,
 * and, for every request whose recorded reply copied a span the view no longer showed, the re-read that would
 * have been needed: one extra request at the view's size (read from cache, which the request just wrote) plus
 * the outputs that held the missing spans (written); what a re-read brought back then rides in every later
 * request (read from the cache) until the view is rewritten at a checkpoint. An output re-read once is not
 * charged again until that checkpoint (which could have removed it again).
 *
 * @example
 * const meter = new ReplayMeter({ cache: cacheProfiles.anthropic, tokensOf });
 * meter.request({ at, fixed, history, view, reply });
 * meter.totals.costWithRereads;
 */
export class ReplayMeter {
  readonly #options: ReplayMeterOptions;
  readonly #cache: PromptCache;
  readonly #grounding: GroundingTracker | undefined;
  #previousView: readonly Message[] = [];
  /** Its length then (a caller may grow one array between requests, as a replay's history). */
  #previousLength = 0;
  /** The previous request's payload segments: the fixed ones, then one per message of `#previousView`. */
  #segments: PayloadSegment[] = [];
  #fixedCount = 0;
  #rereadSources = new Set<Message>();
  /** Tokens re-read outputs (and their calls) add to every later payload until the next checkpoint. */
  #rereadCarry = 0;
  #requests = 0;
  #inputTokens = 0;
  #cacheRead = 0;
  #cacheWrite = 0;
  #costUnits = 0;
  #summaryCalls = 0;
  #summaryInput = 0;
  #summaryOutput = 0;
  #rereadCost = 0;
  #rereads = 0;

  constructor(options: ReplayMeterOptions) {
    this.#options = options;
    this.#cache = new PromptCache(options.cache);
    this.#grounding = options.grounding === false ? undefined : new GroundingTracker();
  }

  /** The grounding totals so far (undefined when grounding is off). */
  get grounding(): GroundingTracker | undefined {
    return this.#grounding;
  }

  /**
   * Meters one request: `fixed` is the system prompt and tools (tokens, and an identity so a change is seen),
   * `view` the messages sent, `history` every message before the request and `reply` what the recorded agent
   * answered (for grounding).
   */
  request(input: {
    readonly at: number;
    /** When the reply arrived (entries live from then); default `at`. */
    readonly refreshedAt?: number;
    readonly fixed: { readonly identity: string; readonly tokens: number };
    readonly history: readonly Message[];
    readonly view: readonly Message[];
    readonly reply: readonly Message[];
    /** Where ctxkit's placement puts breakpoints besides the newest messages (`GovernedRequest.cacheAnchors`). */
    readonly anchors?: readonly number[];
    /**
     * Leading messages of `view` the caller knows are the previous view's (an ungoverned history that only
     * grew at its end): not compared again, so a long history costs what it added.
     */
    readonly unchanged?: number;
  }): MeteredRequest {
    const { cache, tokensOf } = this.#options;
    const previous = this.#previousView;
    const previousLength = this.#previousLength;
    let same = Math.max(0, Math.min(input.unchanged ?? 0, previousLength, input.view.length));
    while (same < previousLength && same < input.view.length && input.view[same] === previous[same]) same++;
    const fixed = input.fixed.tokens > 0 ? [fixedSegment(input.fixed.identity, input.fixed.tokens)] : [];
    // The previous request's segments are reused, and grown in place while the view only grows: per-request work
    // stays with what changed (the loop above only compares references, and not those the caller vouched for).
    const sameFixed =
      this.#fixedCount === fixed.length && (fixed.length === 0 || this.#segments[0] === fixed[0]);
    const grows = same === previousLength && sameFixed;
    if (!grows)
      this.#segments = [...fixed, ...this.#segments.slice(this.#fixedCount, this.#fixedCount + same)];
    this.#fixedCount = fixed.length;
    for (let index = same; index < input.view.length; index++) {
      const message = input.view[index]!;
      this.#segments.push(messageSegment(message, tokensOf(message)));
    }
    const segments = this.#segments;
    const bill = this.#cache.bill({
      at: input.at,
      ...(input.refreshedAt !== undefined && { refreshedAt: input.refreshedAt }),
      segments,
      unchanged: sameFixed ? fixed.length + same : 0,
      breakpoints: breakpointIndices(
        this.#options.breakpoints ?? "ctxkit",
        input.view,
        segments.length - input.view.length,
        input.anchors,
      ),
      ...(this.#options.longTtl === true && { longTtl: true }),
    });
    this.#requests++;
    this.#inputTokens += bill.tokens;
    this.#cacheRead += bill.cacheRead;
    this.#cacheWrite += bill.cacheWrite;
    this.#costUnits += bill.costUnits;
    // The view was rewritten (a checkpoint) when a message before the previous one's trailing notices changed;
    // a notice, new on every request near the budget, rewrites nothing.
    let stable = previousLength;
    while (stable > 0 && ephemeral(previous[stable - 1]!)) stable--;
    if (same < stable) {
      this.#rereadSources = new Set();
      this.#rereadCarry = 0;
    }
    this.#previousView = input.view;
    this.#previousLength = input.view.length;
    const grounding = this.#grounding?.observe(input.history, input.view, input.reply);
    // What earlier re-reads brought back stays in the live agent's context: each later request reads it from
    // the cache, until a checkpoint rewrites the view (the least it can cost; a policy may keep it longer).
    let rereadCostUnits = this.#rereadCarry * cache.read;
    this.#rereadCost += rereadCostUnits;
    if (grounding !== undefined && grounding.missing.length > 0) {
      let sourceTokens = 0;
      for (const { source } of grounding.missing) {
        if (this.#rereadSources.has(source)) continue;
        this.#rereadSources.add(source);
        sourceTokens += tokensOf(source);
      }
      if (sourceTokens > 0) {
        const call =
          bill.tokens * cache.read +
          (sourceTokens + REREAD_CALL_TOKENS) * cache.write +
          REREAD_CALL_TOKENS * cache.output;
        rereadCostUnits += call;
        this.#rereads++;
        this.#rereadCost += call;
        this.#rereadCarry += sourceTokens + REREAD_CALL_TOKENS;
      }
    }
    return { bill, ...(grounding !== undefined && { grounding }), rereadCostUnits };
  }

  /** Meters one summarizer call, billed as an LLM call would be. */
  summary(call: SummaryCall): void {
    this.#summaryCalls++;
    this.#summaryInput += call.inputTokens;
    this.#summaryOutput += call.outputTokens;
  }

  /** Totals so far. */
  get totals(): MeterTotals {
    const prices = this.#options.summaryPrices ?? { input: 1, output: this.#options.cache.output };
    const summarizerCostUnits = this.#summaryInput * prices.input + this.#summaryOutput * prices.output;
    return {
      requests: this.#requests,
      inputTokens: this.#inputTokens,
      cacheReadTokens: this.#cacheRead,
      cacheWriteTokens: this.#cacheWrite,
      costUnits: this.#costUnits,
      summaryCalls: this.#summaryCalls,
      summaryInputTokens: this.#summaryInput,
      summaryOutputTokens: this.#summaryOutput,
      summarizerCostUnits,
      rereadCostUnits: this.#rereadCost,
      rereads: this.#rereads,
      costWithRereads: this.#costUnits + summarizerCostUnits + this.#rereadCost,
    };
  }
}
