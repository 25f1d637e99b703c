/**
 * The tokenizers ctxkit knows. `o200k_base` and `cl100k_base` are counted exactly (`gpt-tokenizer`); every
 * other family is estimated with measured rates (`estimator-profiles.ts`).
 *
 * - `claude`: Claude 3 … Claude 4.6. `claude-2026`: the tokenizer introduced with Claude Opus 4.7, which
 *   Anthropic says yields up to ~1.35× more tokens for the same text (our transcripts agree).
 * - `gemini`: Gemini and Gemma 3 (SentencePiece, 256k vocabulary, digits split one by one).
 * - `llama`: Llama 3.x (tiktoken-style, 128k vocabulary). `qwen`: Qwen 2.5/3. `mistral`: Mistral/Mixtral.
 *   `deepseek`: DeepSeek V3/R1. `generic`: anything else (deliberately on the high side).
 */
export const TOKENIZER_FAMILIES = [
  "o200k_base",
  "cl100k_base",
  "claude",
  "claude-2026",
  "gemini",
  "llama",
  "qwen",
  "mistral",
  "deepseek",
  "generic",
] as const;

/** One of `TOKENIZER_FAMILIES`. */
export type TokenizerFamily = (typeof TOKENIZER_FAMILIES)[number];

/** The OpenAI encodings counted exactly. */
export type ExactEncoding = "o200k_base" | "cl100k_base";

/**
 * True for the families `gpt-tokenizer` counts exactly.
 *
 * @example
 * isExactEncoding("o200k_base"); // true
 * isExactEncoding("claude"); // false
 */
export function isExactEncoding(family: TokenizerFamily): family is ExactEncoding {
  return family === "o200k_base" || family === "cl100k_base";
}

/**
 * True when `value` names a known tokenizer family.
 *
 * @example
 * isTokenizerFamily("gemini"); // true
 */
export function isTokenizerFamily(value: string): value is TokenizerFamily {
  return (TOKENIZER_FAMILIES as readonly string[]).includes(value);
}
