/**
 * The shortest prefix Anthropic caches, per model family: a breakpoint on a shorter prefix creates no cache entry
 * (the request still succeeds, billed in full), so placing one wastes one of the four.
 *
 * Source: Anthropic's prompt-caching guide, "Cache limitations" (platform.claude.com/docs/en/build-with-claude/
 * prompt-caching), as quoted in anthropics/anthropic-sdk-python#1194 (early 2026): 4,096 tokens for Claude Opus
 * 4.6 and 4.5 and Haiku 4.5; 1,024 for Sonnet 4.6, Sonnet 4.5, Opus 4.1, Opus 4, Sonnet 4 and Sonnet 3.7; 2,048
 * for Haiku 3.5 and Haiku 3. Later revisions of the guide (mid 2026) add Opus 4.7 at 4,096 and Opus 4.8 at 1,024.
 * Checked 2026 with the docs search; re-check when a family is added. Families not listed (newer models) get
 * 1,024, the lowest documented floor: a floor set too low only risks an unused breakpoint, one set too high would
 * leave a cacheable prefix unmarked.
 */
const MINIMUMS: readonly { readonly family: string; readonly pattern: RegExp; readonly minTokens: number }[] =
  [
    { family: "Claude Opus 4.5–4.7", pattern: /opus-4-[5-7](?!\d)/, minTokens: 4_096 },
    { family: "Claude Haiku 4.5", pattern: /haiku-4-5(?!\d)/, minTokens: 4_096 },
    { family: "Claude Haiku 3 and 3.5", pattern: /claude-3-(?:5-)?haiku|haiku-3(?!\d)/, minTokens: 2_048 },
  ];

/** The minimum for Claude models not in the table (Sonnet 4.x, Opus 4 / 4.1 / 4.8, Sonnet 3.7, newer models). */
export const DEFAULT_MIN_CACHEABLE_TOKENS = 1_024;

/**
 * The minimum cacheable prefix of an Anthropic model, in tokens. Accepts API ids with or without a date,
 * dotted versions and provider prefixes (`claude-opus-4-5-20251101`, `anthropic/claude-haiku-4.5`,
 * `us.anthropic.claude-3-5-haiku-20241022-v1:0`); unknown or missing ids get `DEFAULT_MIN_CACHEABLE_TOKENS`.
 *
 * @example
 * anthropicMinimumCacheableTokens("claude-haiku-4-5"); // 4096
 * anthropicMinimumCacheableTokens("claude-sonnet-4-5-20250929"); // 1024
 */
export function anthropicMinimumCacheableTokens(model: string | undefined): number {
  if (model === undefined) return DEFAULT_MIN_CACHEABLE_TOKENS;
  const id = model.toLowerCase().replaceAll(".", "-");
  return MINIMUMS.find((entry) => entry.pattern.test(id))?.minTokens ?? DEFAULT_MIN_CACHEABLE_TOKENS;
}
