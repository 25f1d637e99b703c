// Why this exists: a BPE tokenizer first cuts text into pre-tokens with a regular expression (tiktoken's
// cl100k_base / o200k_base patterns), then merges the bytes of each pre-token, and gpt-tokenizer's merge loop
// is quadratic in the pre-token's length. Ordinary text has short pre-tokens, but a run of one character, a
// long word without spaces or a long whitespace run is a single pre-token: 200k repeated letters took 22 s.
// Counting such text in pieces of bounded run length makes counting linear in the input.

const SPACE = 1; // whitespace other than \r and \n
const BREAK = 2; // \r or \n
const LETTER = 3; // \p{L}
const MARK = 4; // \p{M}
const NUMBER = 5; // \p{N}
const APOSTROPHE = 6; // ' (starts a contraction suffix: "don't")
const SLASH = 7; // / (o200k's punctuation pre-tokens take it after line breaks: ".\n/")
const OTHER = 8; // any other character that is not whitespace
const ASTRAL = 9; // a UTF-16 surrogate: a character outside the BMP, of unknown category (never whitespace)
const CLASSES = 10;

/**
 * `CUTS[before * CLASSES + after]` is 1 when no pre-token of cl100k_base or o200k_base can contain a character
 * of class `before` followed by one of class `after`, whatever surrounds them, and the text before the cut does
 * not end in whitespace (whose pre-token depends on what follows: `\s+(?!\S)`, `\s+$`). Both encodings' patterns
 * then split the two sides exactly as they split the whole, so counting them apart changes nothing:
 * - non-whitespace, then whitespace other than a line break: letter and number pre-tokens end in letters,
 *   marks, a contraction or a digit; punctuation pre-tokens end in punctuation, line breaks or `/`; none take
 *   a following space;
 * - a line break, then non-whitespace other than `/`: a line break ends its pre-token (the optional prefix
 *   before letters excludes `\r\n`; the one before punctuation is a space only; o200k's punctuation pre-tokens
 *   end in `[\r\n/]*`), and the whitespace run before the cut ends in a line break, which `\s*[\r\n]+`
 *   (o200k), `\s*[\r\n]` and `\s+$` (cl100k) all take whole;
 * - a letter, then punctuation or a digit (not a mark, which o200k joins to the letters, nor an apostrophe);
 * - a digit next to a non-digit that is not whitespace (`\p{N}{1,3}` takes digits only, and no prefix is a
 *   digit).
 * `bounded-pieces.test.ts` checks this on random text against the tokenizer itself.
 */
const CUTS: Uint8Array = (() => {
  const cuts = new Uint8Array(CLASSES * CLASSES);
  const set = (before: readonly number[], after: readonly number[]) => {
    for (const first of before) for (const second of after) cuts[first * CLASSES + second] = 1;
  };
  set([LETTER, MARK, NUMBER, APOSTROPHE, SLASH, OTHER, ASTRAL], [SPACE]);
  set([BREAK], [LETTER, MARK, NUMBER, APOSTROPHE, OTHER, ASTRAL]);
  set([LETTER], [SLASH, OTHER, NUMBER]);
  set([NUMBER], [LETTER, MARK, APOSTROPHE, SLASH, OTHER]);
  set([LETTER, MARK, APOSTROPHE, SLASH, OTHER], [NUMBER]);
  return cuts;
})();

/** Class of each BMP code unit, filled on first sight (0 = not yet classified). */
const classes = new Uint8Array(0x10000);

function classify(code: number): number {
  if (code === 10 || code === 13) return BREAK;
  if (code >= 0xd800 && code <= 0xdfff) return ASTRAL;
  if (code === 39) return APOSTROPHE;
  if (code === 47) return SLASH;
  const character = String.fromCharCode(code);
  if (/\s/u.test(character)) return SPACE;
  if (/\p{L}/u.test(character)) return LETTER;
  if (/\p{M}/u.test(character)) return MARK;
  if (/\p{N}/u.test(character)) return NUMBER;
  return OTHER;
}

function classAt(text: string, index: number): number {
  const code = text.charCodeAt(index);
  let found = classes[code]!;
  if (found === 0) {
    found = classify(code);
    classes[code] = found;
  }
  return found;
}

function isSurrogatePair(text: string, index: number): boolean {
  const high = text.charCodeAt(index);
  const low = text.charCodeAt(index + 1);
  return high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff;
}

/** Longest run of text without a safe cut that is tokenized whole (UTF-16 code units). */
export const MAX_RUN = 1024;

/** Size a piece grows to before it is closed at the next safe cut (UTF-16 code units). */
export const PIECE_SIZE = 16_384;

/**
 * Cuts `text` into pieces to tokenize one by one, so that no stretch of more than `maxRun` characters between
 * two safe cuts (see `CUTS`) is tokenized whole, and no piece is much longer than `pieceSize`. A piece closes
 * at the first safe cut after it reached `pieceSize` characters, which changes no count; a stretch longer than
 * `maxRun` is also cut every `maxRun` characters (a forced cut, never inside a surrogate pair), which may
 * change the count by a token or so (see docs/tokens.md). Text without such a stretch and no longer than
 * `pieceSize` is returned whole.
 *
 * @example
 * boundedPieces("a".repeat(2_500)); // ["a" × 1024, "a" × 1024, "a" × 452]
 * boundedPieces("hello world"); // ["hello world"]
 */
export function boundedPieces(text: string, maxRun = MAX_RUN, pieceSize = PIECE_SIZE): string[] {
  if (text.length <= Math.min(maxRun, pieceSize)) return [text];
  const pieces: string[] = [];
  let pieceStart = 0;
  let runStart = 0;
  let before = classAt(text, 0);
  for (let index = 1; index < text.length; index++) {
    const after = classAt(text, index);
    if (CUTS[before * CLASSES + after] === 1) {
      runStart = index;
      if (index - pieceStart >= pieceSize) {
        pieces.push(text.slice(pieceStart, index));
        pieceStart = index;
      }
    } else if (index - runStart >= maxRun) {
      // Never between the halves of a surrogate pair: cut before the pair instead.
      const cut = isSurrogatePair(text, index - 1) ? index - 1 : index;
      pieces.push(text.slice(pieceStart, cut));
      pieceStart = cut;
      runStart = cut;
    }
    before = after;
  }
  pieces.push(text.slice(pieceStart));
  return pieces;
}
