/**
 * The text patterns behind retention facts (DESIGN.md, "Retention"). Each function returns facts in their
 * display form (original case, whitespace collapsed), in order of appearance, without duplicates;
 * `normalizeFact` turns a display form into the key that is scored.
 */

/** Characters a path token may contain. Everything else (spaces, quotes, brackets, commas…) ends a token. */
const PATH_TOKEN = /[\w.\-~/\\@+%:]+/g;
/** A trailing `:12`, `:12:5` or `:0:0-0:0` position suffix, as compilers and editors print it. */
const POSITION_SUFFIX = /(?::\d+)+(?:-\d+(?::\d+)*)?$/;
/** A file extension with at least one letter (so `1/2.5` is not a path). */
const FILE_EXTENSION = /\.(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{1,10}$/;
const MAX_PATH_LENGTH = 260;
const ERROR_LINE = /error|exception|traceback|failed|fatal/i;
/** Error lines keep their first 120 characters. */
export const ERROR_LINE_LENGTH = 120;
/** Instruction sentences shorter or longer than this are not facts. */
export const INSTRUCTION_SENTENCE_LENGTH = { min: 12, max: 200 } as const;

/**
 * The scored form of a fact: lower case, whitespace collapsed to single spaces, trimmed.
 *
 * @example
 * normalizeFact("  Read(SRC/a.ts)\n") // "read(src/a.ts)"
 */
export function normalizeFact(text: string): string {
  return collapseWhitespace(text).toLowerCase();
}

/**
 * Whitespace runs collapsed to one space, ends trimmed.
 *
 * @example
 * collapseWhitespace(" a \n\t b ") // "a b"
 */
export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/**
 * File paths in `text`: tokens containing `/` or `\` that end in a file extension, or that start with `./`, `~/`
 * or `/`. URLs are skipped except `file://` ones (their path is kept), and so are closing tags (`</div>`);
 * trailing `:line:column` suffixes and sentence punctuation are removed.
 *
 * @example
 * filePathsIn("see src/a.ts:12, ./run and https://x.io/y.html") // ["src/a.ts", "./run"]
 */
export function filePathsIn(text: string): string[] {
  const found = new Set<string>();
  for (const match of text.matchAll(PATH_TOKEN)) {
    // `</code>` is a closing tag, not a path.
    if (text[match.index - 1] === "<") continue;
    // Cleaning only removes characters, and a path has a separator.
    if (!match[0].includes("/") && !match[0].includes("\\")) continue;
    const path = cleanPathToken(match[0]);
    if (path !== undefined && isFilePath(path)) found.add(path);
  }
  return [...found];
}

function cleanPathToken(token: string): string | undefined {
  // The suffix patterns backtrack on long runs of `:`, digits or dots: a token too long to be a path (plus the
  // longest suffix and URL scheme worth stripping) is not one, and is never scanned.
  if (token.length > 2 * MAX_PATH_LENGTH) return undefined;
  let path = token;
  const scheme = path.indexOf("://");
  if (scheme !== -1) {
    const fileScheme = path.toLowerCase().lastIndexOf("file://");
    if (fileScheme === -1) return undefined;
    path = path.slice(fileScheme + "file://".length);
  }
  // `src/a.ts:3:` (grep -n) as well as `src/a.ts:3` and `src/a.ts.`: punctuation, position, punctuation.
  path = path
    .replace(/[.:,]+$/, "")
    .replace(POSITION_SUFFIX, "")
    .replace(/[.:,]+$/, "");
  return path.length >= 3 && path.length <= MAX_PATH_LENGTH ? path : undefined;
}

function isFilePath(path: string): boolean {
  if (path.startsWith("./") || path.startsWith("~/")) return path.length > 2;
  // `/` must start a name (not `//` comments, not `/\s+/g` regular expressions).
  if (path.startsWith("/")) return /^\/[\w.~-]/.test(path);
  return (path.includes("/") || path.includes("\\")) && FILE_EXTENSION.test(path);
}

/**
 * Error lines in `text`: lines matching /error|exception|traceback|failed|fatal/i, whitespace collapsed, cut to
 * their first 120 characters.
 *
 * @example
 * errorLinesIn("ok\nTypeError: x is undefined\n") // ["TypeError: x is undefined"]
 */
export function errorLinesIn(text: string): string[] {
  const found = new Set<string>();
  for (const line of text.split("\n")) {
    if (!ERROR_LINE.test(line)) continue;
    const label = errorLineLabel(line);
    if (label !== "") found.add(label);
  }
  return [...found];
}

/**
 * The display form of one error line: whitespace collapsed, first 120 characters, trimmed.
 *
 * @example
 * errorLineLabel("   Error:   boom  ") // "Error: boom"
 */
export function errorLineLabel(line: string): string {
  return collapseWhitespace(line).slice(0, ERROR_LINE_LENGTH).trim();
}

/**
 * The sentences of a user instruction that count as facts: split at `.`, `!` or `?` followed by whitespace and
 * at line breaks, whitespace collapsed, kept when 12–200 characters long.
 *
 * @example
 * instructionSentences("Fix the parser. Then run npm test! ok") // ["Fix the parser.", "Then run npm test!"]
 */
export function instructionSentences(text: string): string[] {
  const found = new Set<string>();
  for (const piece of text.split(/(?<=[.!?])\s+|\n+/)) {
    const sentence = collapseWhitespace(piece);
    const { min, max } = INSTRUCTION_SENTENCE_LENGTH;
    if (sentence.length >= min && sentence.length <= max) found.add(sentence);
  }
  return [...found];
}
