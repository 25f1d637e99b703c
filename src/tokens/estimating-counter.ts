import type { Message } from "../model/message.ts";
import { estimatorProfile, type EstimatorProfile } from "./estimator-profiles.ts";
import { sumMessageTokens, type MessageCosts } from "./message-costs.ts";
import { estimateTextTokens, type TextRates } from "./text-estimate.ts";
import type { TokenCounter } from "./token-counter.ts";
import type { TokenizerFamily } from "./tokenizer-family.ts";

/** Bumped whenever the built-in rates change, so counts cached under an older estimator are redone. */
export const ESTIMATOR_VERSION = 1;

/** Options of `createEstimatingCounter`. */
export interface EstimatingCounterOptions {
  /** The tokenizer family whose measured profile to start from. Default `generic`. */
  family?: TokenizerFamily;
  /** Replaces some text rates of the profile. */
  rates?: Partial<TextRates>;
  /** Replaces some message costs of the profile. */
  costs?: Partial<MessageCosts>;
  /** The counter's name. Default `estimate:<family>@<version>`, plus a hash of any custom rates or costs. */
  name?: string;
}

/** FNV-1a, as 8 hex digits: a short stable tag for custom settings. */
function shortHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, "0");
}

/** A synchronous, dependency-free `TokenCounter` that estimates from character classes. */
export interface EstimatingCounter extends TokenCounter {
  readonly profile: EstimatorProfile;
}

/**
 * Creates a pure, synchronous estimating counter for `family`: one pass over each text, fixed costs for
 * images and files, and per-message and per-tool framing. Counts are whole tokens (each message rounded once).
 *
 * @example
 * const counter = createEstimatingCounter({ family: "claude" });
 * counter.name; // "estimate:claude@1"
 * counter.countText("Hello, world"); // 3
 */
export function createEstimatingCounter(options: EstimatingCounterOptions = {}): EstimatingCounter {
  const base = estimatorProfile(options.family ?? "generic");
  const custom =
    options.rates === undefined && options.costs === undefined
      ? ""
      : `+${shortHash(JSON.stringify([options.rates ?? {}, options.costs ?? {}]))}`;
  const profile: EstimatorProfile = Object.freeze({
    family: base.family,
    rates: Object.freeze({ ...base.rates, ...options.rates }),
    costs: Object.freeze({ ...base.costs, ...options.costs }),
  });
  const name = options.name ?? `estimate:${profile.family}${custom}@${ESTIMATOR_VERSION}`;
  const fractional = (text: string) => estimateTextTokens(text, profile.rates);
  return Object.freeze({
    name,
    profile,
    countText: (text: string) => Math.round(fractional(text)),
    countMessage: (message: Message) => Math.round(sumMessageTokens(message, profile.costs, fractional)),
  });
}
