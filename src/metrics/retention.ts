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
 * verbatim takes them back), found by comparing references. Presence is kept per view message: only the
 * messages that differ from the previous view are scanned, at O(text) look-ups in a `SubstringSet` of the facts
 * at stake however many there are; facts newly at stake are also looked for in the messages that stayed.
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
  /** Keys at stake present in the view → the view position of their first occurrence. */
  #present = new Map<string, number>();
  /** Per view position, the keys first found there (some may have left the stake since). */
  #firstFound: string[][] = [];
  #scoringText = new WeakMap<Message, string>();
  /** View message → the original it was compared with, and whether it differs from it. */
  #changedVerdict = new WeakMap<Message, { original: Message; changed: boolean }>();
  #view: readonly Message[] = [];
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
    this.#updateView(view);
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
    this.#present = new Map();
    this.#firstFound = [];
    this.#view = [];
  }

  /**
   * Applies the view's difference with the previous one: copies of introducing messages that left or arrived,
   * then which keys at stake the view holds. A fact never spans two messages, so presence is settled message by
   * message: the keys first found in messages that left are forgotten, the keys put at stake by this request are
   * looked for in the messages that stayed, and the new messages are scanned for every key at stake.
   */
  #updateView(view: readonly Message[]): void {
    const previous = this.#view;
    let same = 0;
    while (same < previous.length && same < view.length && view[same] === previous[same]) same++;
    for (let position = same; position < previous.length; position++) this.#count(previous[position]!, -1);
    for (let position = same; position < view.length; position++) this.#count(view[position]!, 1);
    this.#view = view;
    for (let position = same; position < previous.length; position++)
      for (const key of this.#firstFound[position]!)
        if (this.#present.get(key) === position) this.#present.delete(key);
    this.#firstFound.length = same;
    if (this.#entered.size > 0 && same > 0) {
      const entered = [...this.#entered];
      for (let position = 0; position < same; position++) {
        const text = this.#textOf(view[position]!);
        for (const key of entered)
          if (!this.#present.has(key) && text.includes(key)) this.#found(key, position);
      }
    }
    this.#entered = new Set();
    for (let position = same; position < view.length; position++) {
      this.#firstFound.push([]);
      if (this.#atStake.size === 0) continue;
      this.#searchable.scan(this.#textOf(view[position]!), 0, (key) => {
        if (!this.#present.has(key)) this.#found(key, position);
      });
    }
  }

  #found(key: string, position: number): void {
    this.#present.set(key, position);
    this.#firstFound[position]!.push(key);
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

  #textOf(message: Message): string {
    let text = this.#scoringText.get(message);
    if (text === undefined) {
      text = messageScoringText(message);
      this.#scoringText.set(message, text);
    }
    return text;
  }
}
