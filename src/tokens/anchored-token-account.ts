import { ValidationError } from "../errors/errors.ts";
import type { Message } from "../model/message.ts";
import {
  activeCalibration,
  calibratedTokens,
  initialCalibration,
  learnFromGrowth,
  learnFromWhole,
  type CalibrationOptions,
  type CalibrationState,
} from "./calibration.ts";
import { TokenCache } from "./token-cache.ts";
import type { TokenCounter } from "./token-counter.ts";

/** What a request sends, as far as token accounting is concerned. */
export interface TokenPayload {
  /** The messages, in order. Treat the array as immutable once passed. */
  readonly messages: readonly Message[];
  /** Tokens outside the messages (system prompt, tool definitions), as counted by the same counter. */
  readonly fixedTokens?: number;
}

/**
 * How an estimate was made: `anchored` = the provider's count of an earlier request this payload extends,
 * plus the calibrated estimate of what was added; `rebased` = the same after subtracting what governance
 * replaced inside the anchored prefix (used when that is the smaller part); `calibrated` = a whole-payload
 * estimate scaled by the learnt factor, plus the learnt hidden tokens.
 */
export type EstimateBasis = "anchored" | "rebased" | "calibrated";

/** A payload's estimated prompt tokens and how they were reached. */
export interface TokenEstimate {
  readonly total: number;
  readonly basis: EstimateBasis;
  /** Messages covered by the anchor (0 when `calibrated`). */
  readonly anchoredMessages: number;
  /** The provider-reported (or rebased) tokens of the anchored part (0 when `calibrated`). */
  readonly anchorTokens: number;
  /** Uncalibrated estimate of what the anchor does not cover (the whole payload when `calibrated`). */
  readonly estimatedAddition: number;
  /** Messages the anchor does not cover. */
  readonly addedMessages: number;
  /** Uncalibrated estimate of the whole payload: messages plus fixed tokens. */
  readonly estimatedTotal: number;
}

/** Options of `AnchoredTokenAccount`. */
export interface AnchoredTokenAccountOptions {
  /** Counts messages; or pass `cache` to share counts with other parts of the code. */
  counter?: TokenCounter;
  cache?: TokenCache;
  /** A calibration learnt earlier for this model (see `restoreCalibration`). */
  calibration?: CalibrationState;
  calibrationOptions?: CalibrationOptions;
  /** Learn from observations (default true). With false, estimates use the given calibration as is. */
  learn?: boolean;
}

interface Anchor {
  readonly messages: readonly Message[];
  readonly estimated: number;
  readonly fixed: number;
  readonly reported: number;
}

/** Same message, also when reloaded from a store: same object, or same id with the same content or count. */
function sameMessage(a: Message, b: Message): boolean {
  if (a === b) return true;
  if (a.id !== b.id) return false;
  if (a.content === b.content) return true;
  return a.tokens !== undefined && a.tokens === b.tokens && a.tokenizer === b.tokenizer;
}

function commonPrefixLength(a: readonly Message[], b: readonly Message[]): number {
  const limit = Math.min(a.length, b.length);
  let index = 0;
  while (index < limit && sameMessage(a[index]!, b[index]!)) index++;
  return index;
}

/**
 * Prompt-token accounting anchored on what the provider reports. After `observe(payload, reportedInput)`,
 * the reported number is the truth for that payload; a later payload that extends it is estimated as that
 * number plus the calibrated estimate of the messages added since (and of any change in fixed tokens).
 * When governance rewrote the prefix, the estimate falls back to the whole payload scaled by the learnt
 * calibration. Every message is tokenised once (`TokenCache`); per request, only new messages are
 * tokenised and prefix sums are extended, the prefix check being one identity comparison per message.
 *
 * @example
 * const account = new AnchoredTokenAccount({ counter: estimatorForModel("claude-sonnet-4-5") });
 * account.observe({ messages: sent }, response.usage.input);
 * account.estimate({ messages: [...sent, reply, toolResult] }).total; // reported + estimate of 2 messages
 */
export class AnchoredTokenAccount {
  readonly cache: TokenCache;
  readonly #learn: boolean;
  readonly #calibrationOptions: CalibrationOptions;
  #calibration: CalibrationState;
  #anchor: Anchor | undefined;
  /** The last payload's messages and their running sums: `#sums[i]` = tokens of `#known[0..i)`. */
  #known: Message[] = [];
  #sums: number[] = [0];

  constructor(options: AnchoredTokenAccountOptions) {
    const cache =
      options.cache ?? (options.counter === undefined ? undefined : new TokenCache(options.counter));
    if (cache === undefined) {
      throw new ValidationError("AnchoredTokenAccount needs a token counter: pass { counter } or { cache }", [
        { path: "counter", message: "required when no cache is given" },
      ]);
    }
    this.cache = cache;
    this.#learn = options.learn ?? true;
    this.#calibrationOptions = options.calibrationOptions ?? {};
    this.#calibration = options.calibration ?? initialCalibration(this.#calibrationOptions);
  }

  /** The calibration learnt so far (plain JSON, to persist per model). */
  get calibration(): CalibrationState {
    return this.#calibration;
  }

  /** The anchored request: how many messages it covered and the tokens the provider reported for it. */
  get anchor(): { readonly messages: number; readonly tokens: number } | undefined {
    return this.#anchor && { messages: this.#anchor.messages.length, tokens: this.#anchor.reported };
  }

  /** Estimated prompt tokens of `payload`. */
  estimate(payload: TokenPayload): TokenEstimate {
    const messageTokens = this.#align(payload.messages);
    const fixed = payload.fixedTokens ?? 0;
    const estimatedTotal = messageTokens + fixed;
    const calibration = activeCalibration(this.#calibration);
    const anchor = this.#anchor;
    const count = payload.messages.length;
    if (anchor !== undefined) {
      const shared = commonPrefixLength(anchor.messages, payload.messages);
      const sharedTokens = this.#sums[shared]!;
      const replaced = anchor.estimated - sharedTokens;
      if (shared === anchor.messages.length || (shared > 0 && replaced <= sharedTokens)) {
        const anchorTokens =
          anchor.reported - calibratedTokens(calibration, replaced, anchor.messages.length - shared);
        const estimatedAddition = messageTokens - sharedTokens + fixed - anchor.fixed;
        const addedMessages = count - shared;
        return {
          total: Math.max(
            0,
            Math.round(anchorTokens + calibratedTokens(calibration, estimatedAddition, addedMessages)),
          ),
          basis: shared === anchor.messages.length ? "anchored" : "rebased",
          anchoredMessages: shared,
          anchorTokens: Math.round(anchorTokens),
          estimatedAddition,
          addedMessages,
          estimatedTotal,
        };
      }
    }
    return {
      total: Math.max(
        0,
        Math.round(calibratedTokens(calibration, estimatedTotal, count) + this.#calibration.hiddenTokens),
      ),
      basis: "calibrated",
      anchoredMessages: 0,
      anchorTokens: 0,
      estimatedAddition: estimatedTotal,
      addedMessages: count,
      estimatedTotal,
    };
  }

  /**
   * Records the provider's count of a sent payload: it becomes the anchor, and (unless `learn` is false)
   * the calibration learns from it. Returns the estimate that was made for the payload before learning.
   */
  observe(payload: TokenPayload, reportedInputTokens: number): TokenEstimate {
    const estimate = this.estimate(payload);
    const anchor = this.#anchor;
    if (this.#learn && reportedInputTokens > 0) {
      let calibration = this.#calibration;
      if (anchor !== undefined && estimate.basis === "anchored") {
        const reportedGrowth = reportedInputTokens - anchor.reported;
        calibration = learnFromGrowth(
          calibration,
          {
            estimated: estimate.estimatedAddition,
            reported: reportedGrowth,
            messages: estimate.addedMessages,
          },
          this.#calibrationOptions,
        );
      }
      this.#calibration = learnFromWhole(
        calibration,
        {
          estimated: estimate.estimatedTotal,
          reported: reportedInputTokens,
          messages: payload.messages.length,
        },
        this.#calibrationOptions,
      );
    }
    if (reportedInputTokens > 0) {
      this.#anchor = {
        messages: payload.messages.slice(),
        estimated: this.#sums[payload.messages.length]!,
        fixed: payload.fixedTokens ?? 0,
        reported: reportedInputTokens,
      };
    }
    return estimate;
  }

  /** Forgets the anchor (e.g. when the model or the system prompt changes); keeps the calibration. */
  reset(): void {
    this.#anchor = undefined;
  }

  /** Makes `#known` equal to `messages`, counting only messages not seen at their position; returns the sum. */
  #align(messages: readonly Message[]): number {
    const shared = commonPrefixLength(this.#known, messages);
    this.#known.length = shared;
    this.#sums.length = shared + 1;
    for (let index = shared; index < messages.length; index++) {
      const message = messages[index]!;
      this.#known.push(message);
      this.#sums.push(this.#sums[index]! + this.cache.tokensOf(message));
    }
    return this.#sums[messages.length]!;
  }
}
