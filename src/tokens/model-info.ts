import type { TokenizerFamily } from "./tokenizer-family.ts";

/** What ctxkit needs to know about a model to budget its context. */
export interface ModelInfo {
  /** Canonical id, lower case (e.g. `claude-sonnet-4-5`, `gpt-4.1`, `llama3.1`). */
  readonly id: string;
  readonly provider: string;
  /** Total tokens of a request: prompt plus output. */
  readonly contextWindow: number;
  /** The most output tokens one request may produce. */
  readonly maxOutputTokens: number;
  /** A separate cap on prompt tokens, where the provider has one (GPT-5: 272k of its 400k). */
  readonly maxInputTokens?: number;
  readonly tokenizer: TokenizerFamily;
  /** Other names that mean this model (dated snapshots need none: they match by prefix). */
  readonly aliases?: readonly string[];
}

/** How a model string was matched to a registry entry. */
export type ModelMatch = "exact" | "alias" | "prefix" | "family" | "default";

/** The result of a registry lookup: the model's information and how it was found. */
export interface ResolvedModel extends ModelInfo {
  /** The string that was looked up. */
  readonly requested: string;
  readonly match: ModelMatch;
}

/** Largest share of the output reservation, in tokens (DESIGN.md: reserved = min(20k, max output)). */
export const MAX_RESERVED_OUTPUT_TOKENS = 20_000;

/**
 * Tokens kept free for the model's answer: min(20,000, max output), and never more than a quarter of the window.
 *
 * @example
 * reservedOutputTokens({ contextWindow: 200_000, maxOutputTokens: 64_000 }); // 20000
 */
export function reservedOutputTokens(model: Pick<ModelInfo, "contextWindow" | "maxOutputTokens">): number {
  return Math.min(MAX_RESERVED_OUTPUT_TOKENS, model.maxOutputTokens, Math.floor(model.contextWindow / 4));
}

/**
 * Prompt tokens a request may use: the window minus the output reservation, capped by `maxInputTokens`.
 *
 * @example
 * usableWindow({ contextWindow: 200_000, maxOutputTokens: 64_000 }); // 180000
 * usableWindow({ contextWindow: 400_000, maxOutputTokens: 128_000, maxInputTokens: 272_000 }); // 272000
 */
export function usableWindow(
  model: Pick<ModelInfo, "contextWindow" | "maxOutputTokens" | "maxInputTokens">,
): number {
  const usable = model.contextWindow - reservedOutputTokens(model);
  return Math.max(0, Math.min(usable, model.maxInputTokens ?? usable));
}
