import type { Message } from "../model/message.ts";
import { normalizeFact } from "./fact-patterns.ts";
import { messageFacts, messageScoringText } from "./facts.ts";
import { findSubstrings } from "./find-substrings.ts";

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
  /** The keys of the facts at stake that the view lost. */
  readonly missing: readonly string[];
}

/**
 * Scores retention over the requests of one conversation (DESIGN.md, "Retention"): feed it, per request, the
 * full history so far and the governed view sent; `mean()` is the mean score over requests that had any fact
 * at stake (1 when none had). Matches replay's `RetentionScorer`.
 *
 * Cost: facts are extracted once per history message (cached by id while the history only grows) and each view
 * message is normalised once. A request costs O(H) map look-ups to find changed messages plus, while the view
 * only grows at its end (between checkpoints), one scan of the new view text for the facts not yet found
 * (facts already found stay found). After a checkpoint the whole view is scanned once. A scan looks every
 * position up in a map of fact prefixes, so it costs O(text + matches), not O(text × facts).
 *
 * @example
 * const tracker = new RetentionTracker();
 * for (const request of requests) tracker.observe(request.history, request.view);
 * tracker.mean();
 */
export class RetentionTracker {
  /** History messages indexed so far, in order. */
  #indexed: Message[] = [];
  #seenKeys = new Set<string>();
  /** Message id → keys of the facts first seen in that message. */
  #introducedBy = new Map<string, readonly string[]>();
  #scoringText = new WeakMap<Message, string>();
  /** View message → the original it was compared with, and whether it differs from it. */
  #changedVerdict = new WeakMap<Message, { original: Message; changed: boolean }>();
  #view: readonly Message[] = [];
  #viewText = "";
  #present = new Set<string>();
  /** Keys searched for in `#viewText` (as it was) and not found. */
  #absent = new Set<string>();
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
    const atStake = this.#factsAtStake(history, view);
    if (atStake.length === 0) return { atStake: 0, retained: 0, score: undefined, missing: [] };
    const searchFrom = this.#updateViewText(view);
    this.#search(atStake, searchFrom);
    const missing = atStake.filter((key) => !this.#present.has(key));
    const retained = atStake.length - missing.length;
    const score = retained / atStake.length;
    this.#scoreSum += score;
    this.#scored++;
    return { atStake: atStake.length, retained, score, missing };
  }

  /** Mean score over the requests that had any fact at stake; 1 when none had. */
  mean(): number {
    return this.#scored === 0 ? 1 : this.#scoreSum / this.#scored;
  }

  #index(history: readonly Message[]): void {
    const grows =
      history.length >= this.#indexed.length &&
      this.#indexed.every((message, position) => history[position]?.id === message.id);
    if (!grows) {
      this.#indexed = [];
      this.#seenKeys = new Set();
      this.#introducedBy = new Map();
    }
    for (let position = this.#indexed.length; position < history.length; position++) {
      const message = history[position]!;
      this.#indexed.push(message);
      // Summaries and markers are governance's own output, not facts of the conversation.
      if (message.kind !== undefined) continue;
      const introduced: string[] = [];
      for (const fact of messageFacts(message)) {
        if (this.#seenKeys.has(fact.key)) continue;
        this.#seenKeys.add(fact.key);
        introduced.push(fact.key);
      }
      if (introduced.length > 0) this.#introducedBy.set(message.id, introduced);
    }
  }

  #factsAtStake(history: readonly Message[], view: readonly Message[]): string[] {
    const viewById = new Map<string, Message>();
    for (const message of view) viewById.set(message.id, message);
    const atStake: string[] = [];
    for (const message of history) {
      const introduced = this.#introducedBy.get(message.id);
      if (introduced === undefined) continue;
      const sent = viewById.get(message.id);
      if (sent === undefined || this.#differs(message, sent)) atStake.push(...introduced);
    }
    return atStake;
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

  /** Brings `#viewText` up to `view`; returns where text not yet searched begins. */
  #updateViewText(view: readonly Message[]): number {
    const previous = this.#view;
    const grows =
      view.length >= previous.length && previous.every((message, position) => view[position] === message);
    this.#view = view;
    if (!grows) {
      this.#viewText = view.map((message) => this.#textOf(message)).join("\n");
      this.#present = new Set();
      this.#absent = new Set();
      return 0;
    }
    const searchFrom = this.#viewText.length;
    for (let position = previous.length; position < view.length; position++) {
      const text = this.#textOf(view[position]!);
      this.#viewText = position === 0 ? text : `${this.#viewText}\n${text}`;
    }
    return searchFrom;
  }

  /** Settles every key of `atStake` as present or absent in the current view text. */
  #search(atStake: readonly string[], searchFrom: number): void {
    const onlyNewText: string[] = [];
    const wholeText: string[] = [];
    for (const key of atStake) {
      if (this.#present.has(key)) continue;
      (this.#absent.has(key) ? onlyNewText : wholeText).push(key);
    }
    const found = findSubstrings(this.#viewText, searchFrom, onlyNewText);
    for (const key of findSubstrings(this.#viewText, 0, wholeText)) found.add(key);
    for (const key of [...onlyNewText, ...wholeText]) {
      if (found.has(key)) {
        this.#present.add(key);
        this.#absent.delete(key);
      } else this.#absent.add(key);
    }
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
