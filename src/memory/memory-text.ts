/**
 * How memory text is normalised, searched and de-duplicated, identical for every backend.
 *
 * Normalised text: lower case, words of letters and digits joined by single spaces (the session store's search
 * normalisation). Backends index these words as given, so no database-specific stemming makes them disagree.
 *
 * De-duplication rule: a new memory is a near-duplicate of a stored one when both have the same owner, scope
 * and kind (and, for `session-summary`, the same source session: two sessions' summaries are two records) and
 * 1. their normalised texts are equal (case, punctuation and spacing differences), or
 * 2. the weighted Jaccard similarity (Σ min / Σ max of counts) of their bags of word bigrams is at least
 *    `NEAR_DUPLICATE_SIMILARITY` (0.9). Bigrams are pairs of adjacent normalised words, with a start and an end
 *    marker around the text, so an n-word text has n + 1 of them; they keep word order ("prefers tabs over
 *    spaces" and "prefers spaces over tabs" stay two memories) and the bag keeps repetitions. In practice a
 *    text with one word added or removed is merged once it is about 27 words long, one with a word changed
 *    once it is about 37 words long; shorter texts must match exactly after normalisation.
 * Similarity ≥ 0.9 implies the two bigram counts are within a factor of 0.9 of each other, which is how the
 * database backends narrow the candidates (an indexed range on the stored count) before comparing texts.
 */
import { normalizeSearchText, snippetAround } from "../store/search-text.ts";

/** Minimum Jaccard similarity of word-bigram sets for two memories to be near-duplicates. */
export const NEAR_DUPLICATE_SIMILARITY = 0.9;

/**
 * Lower-cased words of letters and digits, joined by single spaces.
 *
 * @example
 * normalizeMemoryText("Prefers TABS, not spaces!"); // "prefers tabs not spaces"
 */
export function normalizeMemoryText(text: string): string {
  return normalizeSearchText(text);
}

/**
 * The bag of word bigrams of normalised text, with start (`^`) and end (`$`) markers; empty text has none.
 *
 * @example
 * shinglesOf("uses pnpm"); // Map { "^ uses" => 1, "uses pnpm" => 1, "pnpm $" => 1 }
 */
export function shinglesOf(normalized: string): Map<string, number> {
  const shingles = new Map<string, number>();
  if (normalized === "") return shingles;
  const words = ["^", ...normalized.split(" "), "$"];
  for (let index = 1; index < words.length; index++) {
    const shingle = `${words[index - 1]} ${words[index]}`;
    shingles.set(shingle, (shingles.get(shingle) ?? 0) + 1);
  }
  return shingles;
}

/**
 * How many bigrams `shinglesOf` gives normalised text: its word count plus one (0 for empty text).
 *
 * @example
 * shingleCount("uses pnpm not npm"); // 5
 */
export function shingleCount(normalized: string): number {
  return normalized === "" ? 0 : normalized.split(" ").length + 1;
}

/**
 * Weighted Jaccard similarity Σ min(a, b) / Σ max(a, b) of two bags (1 for two empty bags).
 *
 * @example
 * jaccard(new Map([["a", 2]]), new Map([["a", 1], ["b", 1]])); // 1 / 3
 */
export function jaccard(first: ReadonlyMap<string, number>, second: ReadonlyMap<string, number>): number {
  let shared = 0;
  let total = 0;
  for (const [item, count] of first) {
    const other = second.get(item) ?? 0;
    shared += Math.min(count, other);
    total += Math.max(count, other);
  }
  for (const [item, count] of second) if (!first.has(item)) total += count;
  return total === 0 ? 1 : shared / total;
}

/**
 * True when two normalised texts are near-duplicates under the rule above.
 *
 * @example
 * isNearDuplicate("the build uses vite", "the build uses vite"); // true
 */
export function isNearDuplicate(first: string, second: string): boolean {
  if (first === second) return true;
  return jaccard(shinglesOf(first), shinglesOf(second)) >= NEAR_DUPLICATE_SIMILARITY;
}

/**
 * The range of shingle counts a near-duplicate of a text with `count` shingles can have.
 *
 * @example
 * shingleCountRange(20); // { min: 18, max: 22 }
 */
export function shingleCountRange(count: number): { min: number; max: number } {
  return {
    min: Math.ceil(count * NEAR_DUPLICATE_SIMILARITY - 1e-9),
    max: Math.floor(count / NEAR_DUPLICATE_SIMILARITY + 1e-9),
  };
}

/**
 * How many distinct `terms` are whole words of normalised text.
 *
 * @example
 * matchedTermCount("deploy the app", ["app", "db"]); // 1
 */
export function matchedTermCount(normalized: string, terms: readonly string[]): number {
  const words = new Set(normalized.split(" "));
  return [...new Set(terms)].filter((term) => words.has(term)).length;
}

/**
 * About 160 characters of a memory's content around its first matching term.
 *
 * @example
 * memorySnippet("The staging database is on port 5433", ["port"]);
 */
export function memorySnippet(content: string, terms: readonly string[]): string {
  return snippetAround(content, terms);
}
