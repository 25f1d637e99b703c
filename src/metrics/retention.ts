import type { Message } from "../model/message.ts";
import { normalizeFact } from "./fact-patterns.ts";
import { messageFacts, messageScoringText } from "./facts.ts";
import { findSubstrings } from "./find-substrings.ts";
import { SubstringSet } from "./substring-set.ts";

/**
 * The scoring text of a view: a string is normalised as a whole; messages are normalised one by one and joined
 * with line breaks (facts never contain one, so no match can span two messages).
 *
 * @example
 * viewScoringText("Read(SRC/a.ts)") // "read(src/a.ts)"
 */
export function viewScoringText(view: string | readonly Message[]): string {
  if (typeof view === "string") return normalizeFact(view);
  return view.map(messageScoringText).join("\n");
}

/**
 * Share of the facts `atStake` (normalised keys, see `messageFacts`) present as substrings anywhere in `view`;
 * 1 when nothing is at stake. The view text is built once and scanned once (see `findSubstrings`).
 *
 * @example
 * scoreRetention(new Set(["src/a.ts", "read(src/b.ts)"]), "Files: src/a.ts") // 0.5
 */
export function scoreRetention(atStake: ReadonlySet<string>, view: string | readonly Message[]): number {
  if (atStake.size === 0) return 1;
  return findSubstrings(viewScoringText(view), 0, atStake).size / atStake.size;
}

/** What one request kept of the facts governance put at stake. */
export interface RetentionObservation {
  /** Facts first seen in messages that governance changed or removed. */
  readonly atStake: number;
  /** How many of them are still present in the view. */
  readonly retained: number;
  /** `retained / atStake`, or undefined when nothing was at stake. */
  readonly score: number | undefined;
}

/** A history message that introduced facts, and how many verbatim copies of it the current view holds. */
interface Introduction {
  readonly message: Message;
  /** The keys of the facts first seen in it. */
  readonly keys: readonly string[];
  copies: number;
}

/**
 * Scores retention over the requests of one conversation (DESIGN.md, "Retention"): feed it, per request, the
 * full history so far and the governed view sent; `mean()` is the mean score over requests that had any fact
 * at stake (1 when none had). Matches replay's `RetentionScorer`.
 *
 * Cost: per request, work grows with what changed, never with the history. Facts are extracted once per new
 * history message; the facts at stake are kept up to date from the view's difference with the previous view
 * (a message that left the view or was replaced puts the facts it introduced at stake, one that came back
 * verbatim takes them back), found by comparing references. While the view only grows at its end (between
 * checkpoints) only its new text is scanned; after a checkpoint the whole view text is scanned once. A scan
 * costs O(text) look-ups in a `SubstringSet` of the facts at stake, however many there are.
 *
 * @example
 * const tracker = new RetentionTracker();
 * for (const request of requests) tracker.observe(request.history, request.view);
 * tracker.mean();
 */
export class RetentionTracker {
  /** How many history messages were indexed, and the last of them (a history continues when it still holds it). */
  #indexedCount = 0;
  #lastIndexed: Message | undefined;
  #seenKeys = new Set<string>();
  /** Message id → the message that introduced facts, in history order. */
  #introductions = new Map<string, Introduction>();
  /** The keys of the facts at stake, as a set and as a searchable set. */
  #atStake = new Set<string>();
  #searchable = new SubstringSet();
  /** Keys put at stake by this request, not yet searched for in the view text. */
  #entered = new Set<string>();
  /** Keys at stake that are present in `#viewText`. */
  #present = new Set<string>();
  #scoringText = new WeakMap<Message, string>();
  /** View message → the original it was compared with, and whether it differs from it. */
  #changedVerdict = new WeakMap<Message, { original: Message; changed: boolean }>();
  #view: readonly Message[] = [];
  #viewText = "";
  #scoreSum = 0;
  #scored = 0;
  #requests = 0;

  /** Requests observed. */
  get requests(): number {
    return this.#requests;
  }

  /** Requests that had at least one fact at stake. */
  get scoredRequests(): number {
    return this.#scored;
  }

  /** Scores one request: `history` is every message so far, `view` the governed messages sent. */
  observe(history: readonly Message[], view: readonly Message[]): RetentionObservation {
    this.#requests++;
    this.#index(history);
    const searchFrom = this.#updateView(view);
    this.#search(searchFrom);
    const atStake = this.#atStake.size;
    if (atStake === 0) return { atStake: 0, retained: 0, score: undefined };
    const retained = this.#present.size;
    const score = retained / atStake;
    this.#scoreSum += score;
    this.#scored++;
    return { atStake, retained, score };
  }

  /**
   * The keys of the facts at stake in the last request that its view lacked, in history order. Costs a pass
   * over the history: for inspection and tests, not per request.
   */
  missing(): string[] {
    const missing: string[] = [];
    for (const { keys, copies } of this.#introductions.values())
      if (copies === 0) for (const key of keys) if (!this.#present.has(key)) missing.push(key);
    return missing;
  }

  /** Mean score over the requests that had any fact at stake; 1 when none had. */
  mean(): number {
    return this.#scored === 0 ? 1 : this.#scoreSum / this.#scored;
  }

  #index(history: readonly Message[]): void {
    const known = this.#indexedCount;
    const continues = history.length >= known && (known === 0 || history[known - 1] === this.#lastIndexed);
    if (!continues) this.#reset();
    for (let position = this.#indexedCount; position < history.length; position++) {
      const message = history[position]!;
      // Summaries and markers are governance's own output, not facts of the conversation.
      if (message.kind !== undefined) continue;
      const keys: string[] = [];
      for (const fact of messageFacts(message)) {
        if (this.#seenKeys.has(fact.key)) continue;
        this.#seenKeys.add(fact.key);
        keys.push(fact.key);
      }
      if (keys.length === 0) continue;
      // At stake until the view is found to hold it verbatim (`#updateView` runs next).
      this.#introductions.set(message.id, { message, keys, copies: 0 });
      this.#putAtStake(keys);
    }
    this.#indexedCount = history.length;
    this.#lastIndexed = history.at(-1);
  }

  #reset(): void {
    this.#indexedCount = 0;
    this.#seenKeys = new Set();
    this.#introductions = new Map();
    this.#atStake = new Set();
    this.#searchable = new SubstringSet();
    this.#entered = new Set();
    this.#present = new Set();
    this.#view = [];
    this.#viewText = "";
  }

  /**
   * Applies the view's difference with the previous one: copies of introducing messages that left or arrived,
   * and the view text. Returns where the text not yet scanned begins (0 after a rewrite: all of it).
   */
  #updateView(view: readonly Message[]): number {
    const previous = this.#view;
    let same = 0;
    while (same < previous.length && same < view.length && view[same] === previous[same]) same++;
    for (let position = same; position < previous.length; position++) this.#count(previous[position]!, -1);
    for (let position = same; position < view.length; position++) this.#count(view[position]!, 1);
    this.#view = view;
    const rewritten = same < previous.length;
    if (rewritten) this.#viewText = "";
    const searchFrom = this.#viewText.length;
    for (let position = rewritten ? 0 : previous.length; position < view.length; position++) {
      const text = this.#textOf(view[position]!);
      this.#viewText = position === 0 ? text : `${this.#viewText}\n${text}`;
    }
    return rewritten ? 0 : searchFrom;
  }

  /** Counts a verbatim copy of an introducing message into (`1`) or out of (`-1`) the view. */
  #count(sent: Message, change: 1 | -1): void {
    const introduction = this.#introductions.get(sent.id);
    if (introduction === undefined || this.#differs(introduction.message, sent)) return;
    introduction.copies += change;
    if (change === 1 && introduction.copies === 1) this.#takeOffStake(introduction.keys);
    if (change === -1 && introduction.copies === 0) this.#putAtStake(introduction.keys);
  }

  #putAtStake(keys: readonly string[]): void {
    for (const key of keys) {
      this.#atStake.add(key);
      this.#searchable.add(key);
      this.#entered.add(key);
    }
  }

  #takeOffStake(keys: readonly string[]): void {
    for (const key of keys) {
      this.#atStake.delete(key);
      this.#searchable.delete(key);
      this.#entered.delete(key);
      this.#present.delete(key);
    }
  }

  #differs(original: Message, sent: Message): boolean {
    if (sent === original || sent.content === original.content) return false;
    const cached = this.#changedVerdict.get(sent);
    if (cached?.original === original) return cached.changed;
    const changed =
      sent.content.length !== original.content.length ||
      sent.content.some(
        (block, position) =>
          block !== original.content[position] &&
          JSON.stringify(block) !== JSON.stringify(original.content[position]),
      );
    this.#changedVerdict.set(sent, { original, changed });
    return changed;
  }

  /**
   * Settles which keys at stake the view text holds: the text from `searchFrom` is scanned for every key at
   * stake (the text before it was scanned already, and text only grows between rewrites), and the keys put at
   * stake by this request are looked for in the older text too.
   */
  #search(searchFrom: number): void {
    if (searchFrom === 0) this.#present = new Set();
    if (this.#atStake.size > 0)
      this.#searchable.scan(this.#viewText, searchFrom, (key) => this.#present.add(key));
    if (searchFrom > 0)
      for (const key of this.#entered)
        if (!this.#present.has(key) && this.#viewText.lastIndexOf(key, searchFrom - 1) >= 0)
          this.#present.add(key);
    this.#entered = new Set();
  }

  #textOf(message: Message): string {
    let text = this.#scoringText.get(message);
    if (text === undefined) {
      text = messageScoringText(message);
      this.#scoringText.set(message, text);
    }
    return text;
  }
}
