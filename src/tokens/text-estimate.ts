/**
 * Token costs of the pieces a BPE pre-tokenizer cuts text into. All values are tokens (fractions allowed);
 * `estimateTextTokens` adds them up in one pass. Measured values for each tokenizer family live in
 * `estimator-profiles.ts` (see docs/tokens.md for how they were fitted).
 */
export interface TextRates {
  /** Each run of letters: a word or one part of an identifier (a lower → upper case change starts a part). */
  readonly word: number;
  /** Each letter of a part beyond the sixth (long words and identifiers split into several tokens). */
  readonly longWordLetter: number;
  /** Each group of up to three consecutive digits (tiktoken-style number splitting). */
  readonly digitGroup: number;
  /** Each digit (for tokenizers that split numbers into single digits; 0 otherwise). */
  readonly digit: number;
  /** Each run of ASCII punctuation or symbols. */
  readonly punctuation: number;
  /** Each punctuation character after the first of a run. */
  readonly punctuationExtra: number;
  /** Each run of two or more spaces or tabs (a single space merges into the next word). */
  readonly spaces: number;
  /** Each run of line breaks. */
  readonly lineBreaks: number;
  /** Extra cost of each letter in U+0080–U+07FF (accented Latin, Greek, Cyrillic, Hebrew, Arabic…). */
  readonly extendedLetter: number;
  /** Each CJK ideograph, kana or hangul character. */
  readonly ideograph: number;
  /** Each other character of the basic multilingual plane (arrows, box drawing, dashes…). */
  readonly symbol: number;
  /** Each character outside the basic multilingual plane (emoji, rare scripts). */
  readonly astral: number;
}

const NONE = 0;
const LETTER = 1;
const DIGIT = 2;
const SPACE = 3;
const LINE_BREAK = 4;
const PUNCTUATION = 5;

/** Letters a word part holds before it starts to cost more than one `word`. */
const SHORT_WORD_LETTERS = 6;

function isIdeograph(code: number): boolean {
  return (
    (code >= 0x3040 && code <= 0x30ff) || // kana
    (code >= 0x3400 && code <= 0x4dbf) || // CJK extension A
    (code >= 0x4e00 && code <= 0x9fff) || // CJK unified ideographs
    (code >= 0xac00 && code <= 0xd7af) || // hangul syllables
    (code >= 0x1100 && code <= 0x11ff) || // hangul jamo
    (code >= 0x3130 && code <= 0x318f) || // hangul compatibility jamo
    (code >= 0xf900 && code <= 0xfaff) || // CJK compatibility ideographs
    (code >= 0xff00 && code <= 0xffef) // full-width forms
  );
}

/**
 * Estimated tokens of `text` (a fraction; round it where a whole number is needed). One pass over the UTF-16
 * code units with a small state machine, no regular expressions and no allocation. Appending characters
 * never lowers the estimate: every cost is added when the character that causes it is read.
 *
 * @example
 * estimateTextTokens("const tokenCount = 42;", rates); // ≈ 6
 */
export function estimateTextTokens(text: string, rates: TextRates): number {
  let total = 0;
  let state = NONE;
  let runLength = 0;
  let previousUpper = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x80) {
      const lower = code >= 97 && code <= 122;
      const upper = code >= 65 && code <= 90;
      if (lower || upper) {
        if (state !== LETTER || (upper && !previousUpper)) {
          total += rates.word;
          state = LETTER;
          runLength = 1;
        } else if (++runLength > SHORT_WORD_LETTERS) total += rates.longWordLetter;
        previousUpper = upper;
      } else if (code >= 48 && code <= 57) {
        runLength = state === DIGIT ? runLength + 1 : 1;
        state = DIGIT;
        if (runLength % 3 === 1) total += rates.digitGroup;
        total += rates.digit;
      } else if (code === 32 || code === 9) {
        runLength = state === SPACE ? runLength + 1 : 1;
        state = SPACE;
        if (runLength === 2) total += rates.spaces;
      } else if (code === 10 || code === 13) {
        if (state !== LINE_BREAK) total += rates.lineBreaks;
        state = LINE_BREAK;
      } else {
        total += state === PUNCTUATION ? rates.punctuationExtra : rates.punctuation;
        state = PUNCTUATION;
      }
    } else if (code < 0x800) {
      // Letters of alphabetic scripts join the word they stand in, as they do in the pre-tokenizer; their
      // own per-letter cost already grows with the word, so they add no long-word cost.
      if (state !== LETTER) {
        total += rates.word;
        state = LETTER;
        runLength = 0;
        previousUpper = false;
      }
      total += rates.extendedLetter;
    } else if (code >= 0xdc00 && code <= 0xdfff) {
      // The low half of a surrogate pair: its high half was already counted.
    } else {
      if (code >= 0xd800 && code <= 0xdbff) total += rates.astral;
      else total += isIdeograph(code) ? rates.ideograph : rates.symbol;
      state = NONE;
    }
  }
  return total;
}
