import { DEFAULT_IMAGE_TOKENS } from "./media-tokens.ts";
import type { MessageCosts } from "./message-costs.ts";
import type { TextRates } from "./text-estimate.ts";
import type { TokenizerFamily } from "./tokenizer-family.ts";

/** Everything the estimator needs for one tokenizer family. */
export interface EstimatorProfile {
  readonly family: TokenizerFamily;
  readonly rates: TextRates;
  readonly costs: MessageCosts;
}

/**
 * Rates fitted by least squares against o200k_base on 5,900 distinct texts of the shared transcripts
 * (prose, code, JSON, shell output): median error 5.5% per text on the held-out half, against 21% for
 * "characters / 4". Non-ASCII rates come from sample paragraphs in seven scripts (docs/tokens.md).
 */
const O200K_RATES: TextRates = {
  word: 0.97,
  longWordLetter: 0.16,
  digitGroup: 1.45,
  digit: 0,
  punctuation: 0.67,
  punctuationExtra: 0.135,
  spaces: 0.95,
  lineBreaks: 0.61,
  extendedLetter: 0.18,
  ideograph: 0.75,
  symbol: 1.3,
  astral: 2.5,
};

/** The same fit against cl100k_base (GPT-4, GPT-3.5): close on ASCII, far costlier outside it. */
const CL100K_RATES: TextRates = {
  word: 1.0,
  longWordLetter: 0.14,
  digitGroup: 1.45,
  digit: 0,
  punctuation: 0.63,
  punctuationExtra: 0.145,
  spaces: 0.92,
  lineBreaks: 0.67,
  extendedLetter: 0.45,
  ideograph: 1.1,
  symbol: 1.35,
  astral: 2.5,
};

/** `base` with every ASCII rate multiplied by `asciiFactor`, then `overrides` applied. */
function scaled(base: TextRates, asciiFactor: number, overrides: Partial<TextRates> = {}): TextRates {
  return {
    ...base,
    word: base.word * asciiFactor,
    longWordLetter: base.longWordLetter * asciiFactor,
    digitGroup: base.digitGroup * asciiFactor,
    punctuation: base.punctuation * asciiFactor,
    punctuationExtra: base.punctuationExtra * asciiFactor,
    spaces: base.spaces * asciiFactor,
    lineBreaks: base.lineBreaks * asciiFactor,
    ...overrides,
  };
}

/** Tokenizers that cut numbers into single digits. */
const SINGLE_DIGITS: Partial<TextRates> = { digitGroup: 0, digit: 1 };

const MEDIA_DEFAULTS = {
  imageRule: "pixels-750",
  defaultImageTokens: DEFAULT_IMAGE_TOKENS,
  pdfPageTokens: 2_000,
  defaultFileTokens: 8_000,
} as const;

/** OpenAI framing, measured on the Codex rollout: a call plus its output add ~23 tokens beyond their text. */
const OPENAI_COSTS: MessageCosts = {
  ...MEDIA_DEFAULTS,
  imageRule: "tiles-512",
  perMessage: 4,
  perToolCall: 10,
  perToolResult: 8,
};

/**
 * Claude: text costs ~1.15× o200k (median of large request deltas in the Claude Code transcripts; public
 * comparisons say 10–20% more), and a tool round trip adds ~95 tokens beyond its text (the `toolu_…` ids
 * appear twice, plus block framing).
 */
const CLAUDE_FACTOR = 1.15;
const CLAUDE_RATES = scaled(O200K_RATES, CLAUDE_FACTOR, {
  extendedLetter: 0.5,
  ideograph: 1.2,
  symbol: 1.5,
  astral: 3,
});
const CLAUDE_COSTS: MessageCosts = { ...MEDIA_DEFAULTS, perMessage: 4, perToolCall: 50, perToolResult: 45 };

/** Claude Opus 4.7's tokenizer: up to ~1.35× Claude's earlier one (Anthropic; our Opus 4.7 transcripts agree). */
const CLAUDE_2026_FACTOR = 1.3;

const PROFILES: Readonly<Record<TokenizerFamily, EstimatorProfile>> = {
  o200k_base: { family: "o200k_base", rates: O200K_RATES, costs: OPENAI_COSTS },
  cl100k_base: { family: "cl100k_base", rates: CL100K_RATES, costs: OPENAI_COSTS },
  claude: { family: "claude", rates: CLAUDE_RATES, costs: CLAUDE_COSTS },
  "claude-2026": {
    family: "claude-2026",
    rates: scaled(CLAUDE_RATES, CLAUDE_2026_FACTOR, { symbol: CLAUDE_RATES.symbol * CLAUDE_2026_FACTOR }),
    costs: CLAUDE_COSTS,
  },
  gemini: {
    family: "gemini",
    rates: scaled(O200K_RATES, 1.05, { ...SINGLE_DIGITS, extendedLetter: 0.3, ideograph: 0.8, symbol: 1.1 }),
    costs: {
      ...MEDIA_DEFAULTS,
      imageRule: "tiles-768",
      pdfPageTokens: 258,
      perMessage: 3,
      perToolCall: 8,
      perToolResult: 8,
    },
  },
  llama: {
    family: "llama",
    rates: scaled(CL100K_RATES, 1, { extendedLetter: 0.4, ideograph: 0.95 }),
    costs: { ...MEDIA_DEFAULTS, perMessage: 5, perToolCall: 10, perToolResult: 6 },
  },
  qwen: {
    family: "qwen",
    rates: scaled(CL100K_RATES, 1, { ...SINGLE_DIGITS, extendedLetter: 0.4, ideograph: 0.7 }),
    costs: { ...MEDIA_DEFAULTS, perMessage: 5, perToolCall: 10, perToolResult: 8 },
  },
  mistral: {
    family: "mistral",
    rates: scaled(CL100K_RATES, 1.2, { ...SINGLE_DIGITS, extendedLetter: 0.8, ideograph: 1.3 }),
    costs: { ...MEDIA_DEFAULTS, perMessage: 4, perToolCall: 10, perToolResult: 8 },
  },
  deepseek: {
    family: "deepseek",
    rates: scaled(CL100K_RATES, 1, { ...SINGLE_DIGITS, extendedLetter: 0.4, ideograph: 0.65 }),
    costs: { ...MEDIA_DEFAULTS, perMessage: 4, perToolCall: 12, perToolResult: 8 },
  },
  generic: {
    family: "generic",
    rates: scaled(CL100K_RATES, 1.2, { ...SINGLE_DIGITS, extendedLetter: 0.8, ideograph: 1.3 }),
    costs: { ...MEDIA_DEFAULTS, perMessage: 5, perToolCall: 15, perToolResult: 10 },
  },
};

/**
 * The estimator profile of a tokenizer family (for `o200k_base`/`cl100k_base`, an approximation of the
 * exact encoding, used before it has loaded).
 *
 * @example
 * estimatorProfile("claude").costs.perToolCall; // 50
 */
export function estimatorProfile(family: TokenizerFamily): EstimatorProfile {
  return PROFILES[family];
}
