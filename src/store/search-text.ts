/**
 * What search indexes and how a query matches, identical for every backend: text is lower-cased and split into
 * words of letters and digits; a session matches when every query word is a whole word of its title or of one
 * of its messages. Backends index the normalised words as given (FTS5 `ascii` tokenizer, PostgreSQL
 * `array_to_tsvector`), so no database-specific stemming or parsing makes them disagree.
 */
import { z } from "zod";
import { ValidationError } from "../errors/errors.ts";
import { toolResultText } from "../model/blocks.ts";
import type { Message } from "../model/message.ts";
import { validate } from "../model/schemas.ts";

/** Characters of normalised text indexed per message. */
export const MAX_SEARCH_TEXT = 65_536;
/** Longer "words" (base64, hashes) are not indexed. */
export const MAX_WORD_LENGTH = 64;

const separators = /[^\p{L}\p{N}]+/u;

/**
 * Words of letters and digits, lower case, joined by single spaces.
 *
 * @example
 * normalizeSearchText("Fix src/App.tsx!"); // "fix src app tsx"
 */
export function normalizeSearchText(text: string): string {
  const lower = text.toLowerCase();
  return (
    asciiWords(lower) ??
    lower
      .split(separators)
      .filter((word) => word !== "" && word.length <= MAX_WORD_LENGTH)
      .join(" ")
  );
}

/**
 * The same words for lower-cased text that is all ASCII (letters and digits are then `a-z` and `0-9`), or
 * undefined when it is not: most text is, and this loop is about twice as fast as the Unicode split.
 */
function asciiWords(lower: string): string | undefined {
  let words = "";
  let start = -1;
  for (let index = 0; index <= lower.length; index++) {
    const code = index < lower.length ? lower.charCodeAt(index) : 32;
    if (code > 127) return undefined;
    if ((code >= 97 && code <= 122) || (code >= 48 && code <= 57)) {
      if (start < 0) start = index;
    } else if (start >= 0) {
      if (index - start <= MAX_WORD_LENGTH) {
        words += words === "" ? lower.slice(start, index) : ` ${lower.slice(start, index)}`;
      }
      start = -1;
    }
  }
  return words;
}

/**
 * The raw searchable text of a message: text, tool calls (name and input) and tool results, joined by
 * newlines and cut to `limit` characters. Stops reading once it has enough, so a 50 MB tool output is
 * never copied whole.
 *
 * @example
 * messageSearchSource(message, 100); // "npm test\n3 passed"
 */
export function messageSearchSource(message: Pick<Message, "content">, limit = Infinity): string {
  let source = "";
  let parts = 0;
  const add = (part: string) => {
    if (parts++ > 0) source += "\n";
    source += part.slice(0, Math.max(0, limit - source.length));
  };
  for (const block of message.content) {
    if (source.length >= limit) break;
    if (block.type === "text") add(block.text);
    else if (block.type === "tool-call") {
      add(block.name);
      add(JSON.stringify(block.input));
    } else if (block.type === "tool-result") add(toolResultText(block.content));
  }
  return source.slice(0, limit);
}

/**
 * The normalised words a backend indexes for a message (capped at `MAX_SEARCH_TEXT` characters).
 *
 * @example
 * searchTextOf(message); // "run the tests npm test 3 passed"
 */
export function searchTextOf(message: Pick<Message, "content">): string {
  const normalized = normalizeSearchText(messageSearchSource(message, MAX_SEARCH_TEXT * 2));
  if (normalized.length <= MAX_SEARCH_TEXT) return normalized;
  const cut = normalized.lastIndexOf(" ", MAX_SEARCH_TEXT);
  return normalized.slice(0, cut > 0 ? cut : MAX_SEARCH_TEXT);
}

/**
 * The distinct words of a query (at most 16). Throws `ValidationError` when it has none.
 *
 * @example
 * searchTerms("Deploy the APP"); // ["deploy", "the", "app"]
 */
export function searchTerms(query: string): string[] {
  validate(z.string().max(1000), query, "search query");
  const terms = [
    ...new Set(
      normalizeSearchText(query)
        .split(" ")
        .filter((term) => term !== ""),
    ),
  ].slice(0, 16);
  if (terms.length === 0) throw new ValidationError("a search needs at least one word of letters or digits");
  return terms;
}

/**
 * True when every term is a word of the title.
 *
 * @example
 * titleMatches("Deploy the app", ["app"]); // true
 */
export function titleMatches(title: string | undefined, terms: readonly string[]): boolean {
  if (title === undefined) return false;
  const words = new Set(normalizeSearchText(title).split(" "));
  return terms.every((term) => words.has(term));
}

/**
 * True when every term is a word of the message's indexed text.
 *
 * @example
 * messageMatches(message, ["npm", "test"]);
 */
export function messageMatches(message: Pick<Message, "content">, terms: readonly string[]): boolean {
  const words = new Set(searchTextOf(message).split(" "));
  return terms.every((term) => words.has(term));
}

/**
 * About 160 characters of `text` around the first occurrence of a term, whitespace collapsed.
 *
 * @example
 * snippetAround("… long output … error: disk full …", ["disk"]);
 */
export function snippetAround(text: string, terms: readonly string[]): string {
  const lower = text.toLowerCase();
  let at = -1;
  for (const term of terms) {
    const found = lower.indexOf(term);
    if (found >= 0 && (at < 0 || found < at)) at = found;
  }
  const start = Math.max(0, at - 60);
  const end = Math.min(text.length, Math.max(at, 0) + 100);
  const middle = text.slice(start, end).replace(/\s+/g, " ").trim();
  return `${start > 0 ? "…" : ""}${middle}${end < text.length ? "…" : ""}`;
}
