import { CONTEXT_KINDS, contextKind, type ContextKind } from "../metrics/context-kind.ts";
import { messageUnits, readableTexts, type GroundingUnit } from "../metrics/grounding-units.ts";
import { replySpans } from "../metrics/reply-spans.ts";
import type { Message, ToolCallBlock } from "../model/message.ts";
import { nonIncreasingFit, REUSE_AGE_LIMITS, reuseBucket, type ReuseRates } from "./reuse-rates.ts";

const BUCKETS = REUSE_AGE_LIMITS.length;
/** Ages below the last bucket's: older pieces are not followed (that bucket has only the prior's counts). */
const WINDOW = REUSE_AGE_LIMITS.at(-2)! + 1;
/**
 * Messages with more readable text than this are left out of the count (not pieces, not holders, and a reply
 * that large is not counted): a pathological payload must not stall the governor, and so large a piece is
 * governed by its size anyway.
 */
const MAX_TEXT_CHARS = 256 * 1024;

/** What a session's agent used again so far, as a governor state keeps it (see `SessionReuse`). */
export interface SessionReuseCounts {
  /** Assistant replies seen. */
  readonly replies: number;
  /**
   * Per kind and age bucket: the replies each piece of that kind was in the history for at an age of the bucket,
   * summed over the pieces (a piece that lived through ages 13–20 adds 8)…
   */
  readonly alive: Readonly<Record<ContextKind, readonly number[]>>;
  /** …and how many of those replies used it. */
  readonly used: Readonly<Record<ContextKind, readonly number[]>>;
  /** The pieces still followed: per reply count they arrived after, how many of each kind. */
  readonly births?: readonly (readonly [number, Partial<Record<ContextKind, number>>])[];
  /** The messages still followed, in the order seen: id, the reply count it arrived after, its kind of context. */
  readonly recent?: readonly (readonly [string, number, ContextKind | null])[];
}

type Rows = Record<ContextKind, number[]>;
/** The newest message holding a unit: a piece of context (its kind) or any other message, and its birth. */
interface Holder {
  readonly kind: ContextKind | undefined;
  readonly born: number;
}

const emptyRows = (): Rows =>
  Object.fromEntries(CONTEXT_KINDS.map((kind) => [kind, Array.from({ length: BUCKETS }, () => 0)])) as Rows;
const copyRows = (rows: Readonly<Record<ContextKind, readonly number[]>>): Rows =>
  Object.fromEntries(CONTEXT_KINDS.map((kind) => [kind, [...rows[kind]]])) as Rows;

const texts = new WeakMap<Message, string>();

/** A message's readable texts, joined (each unit of the message is a substring of it). */
function textOf(message: Message): string {
  let text = texts.get(message);
  if (text === undefined) {
    text = readableTexts(message).join("\n");
    texts.set(message, text);
  }
  return text;
}

/** Whether a message's units are indexed and, for a reply, its spans looked for (see `MAX_TEXT_CHARS`). */
function isIndexed(message: Message): boolean {
  let chars = 0;
  for (const text of readableTexts(message)) if ((chars += text.length) > MAX_TEXT_CHARS) return false;
  return true;
}

/**
 * Measures, as a session goes, how often its agent uses each kind of context again at each age — the count
 * behind the shipped reuse rates (a reply uses a piece when it copies a span whose newest holder is that piece;
 * age in assistant replies since the piece arrived, as `neededContext` counts it) made on this session alone —
 * and blends it with those rates (`rates`), so that a session's own behaviour takes over from the corpus's as
 * it accumulates. Sees each message once; pieces older than the last followed age are forgotten, so memory and
 * per-message work do not grow with the session.
 */
export class SessionReuse {
  #replies = 0;
  readonly #alive: Rows;
  readonly #used: Rows;
  /** Per kind, pieces born at each reply count (index: replies seen before them). */
  readonly #births = new Map<number, Partial<Record<ContextKind, number>>>();
  /** The followed messages' ids, births and kinds, oldest first (what a resumed tracker re-reads). */
  #recent: (readonly [string, number, ContextKind | null])[] = [];
  readonly #holders = new Map<GroundingUnit, Holder>();
  /**
   * The units registered at each reply count, so those that fall out of the followed window go one reply at a time
   * (a sweep of every holder once per window took milliseconds on one request in 55).
   */
  readonly #unitsBorn = new Map<number, GroundingUnit[]>();
  /**
   * Followed messages a resumed tracker has not read yet, oldest first: older than every holder in `#holders`, so
   * a unit missing there is looked for in them, newest first, reading only those whose text contains it.
   */
  #unread: { readonly message: Message; readonly holder: Holder }[] = [];
  /** Tool calls whose results have not arrived (they say what kind a result is). */
  readonly #calls = new Map<string, Pick<ToolCallBlock, "name" | "input"> & { readonly born: number }>();

  constructor(saved?: SessionReuseCounts) {
    this.#alive = saved === undefined ? emptyRows() : copyRows(saved.alive);
    this.#used = saved === undefined ? emptyRows() : copyRows(saved.used);
    this.#replies = saved?.replies ?? 0;
    for (const [born, births] of saved?.births ?? []) this.#births.set(born, { ...births });
  }

  /**
   * A tracker carrying on from `saved`, which had seen the first `covered` messages of `history`: the messages it
   * still follows are registered again in the order it saw them, each found by id with `find` (in the history, or
   * among the stored messages a summary replaced), their words read only when a reply quotes something they may
   * hold, so it goes on exactly as the tracker that saved the counts would. Bounded by the followed ages, not the history. Without what to re-read (a state stored before it was
   * kept) the whole covered history is counted again.
   */
  static resume(
    saved: SessionReuseCounts | undefined,
    history: readonly Message[],
    covered: number,
    find: (id: string) => Message | undefined,
  ): SessionReuse {
    if (saved?.births === undefined || saved.recent === undefined) {
      const fresh = new SessionReuse();
      for (const message of history.slice(0, covered)) fresh.observe(message);
      return fresh;
    }
    const tracker = new SessionReuse(saved);
    for (const [id, born, kind] of saved.recent) {
      const message = find(id);
      if (message === undefined) tracker.#recent.push([id, born, kind]);
      else tracker.#register(message, born, { kind: kind ?? undefined });
    }
    return tracker;
  }

  /** Replies counted so far: the counts (and so `rates`) change only when it does. */
  get replies(): number {
    return this.#replies;
  }

  /** Takes in the next message of the session (importer markers and summaries are not the agent's context). */
  observe(message: Message): void {
    if (message.kind !== undefined) return;
    if (message.role === "assistant") this.#reply(message, isIndexed(message));
    this.#register(message, this.#replies);
  }

  /** The counts so far, as a governor state keeps them. */
  counts(): SessionReuseCounts {
    return {
      replies: this.#replies,
      alive: copyRows(this.#alive),
      used: copyRows(this.#used),
      births: [...this.#births].map(([born, births]) => [born, { ...births }] as const),
      recent: this.#recent.filter(([, born]) => this.#replies - born < WINDOW),
    };
  }

  /**
   * `prior` blended with this session's counts: per kind and age bucket, the prior counts as `weight` of
   * `alive` (piece-replies) at its rate beside what this session counted; the whole is then fitted not to rise
   * with age.
   */
  rates(prior: ReuseRates, weight: number): ReuseRates {
    return Object.fromEntries(
      CONTEXT_KINDS.map((kind) => {
        const rates = prior[kind];
        const used = this.#used[kind].map((count, bucket) => count + rates[bucket]! * weight);
        const alive = this.#alive[kind].map((count) => count + weight);
        return [kind, nonIncreasingFit(used, alive)];
      }),
    ) as Record<ContextKind, number[]>;
  }

  /**
   * A message seen after `replies` replies: a holder of its units and, when it is one, a piece of context whose
   * arrival counts — unless it is too large to read (`MAX_TEXT_CHARS`), or `resumed` (its kind as recorded then;
   * a resumed tracker has its birth already).
   */
  #register(message: Message, replies: number, resumed?: { readonly kind: ContextKind | undefined }): void {
    for (const block of message.content)
      if (block.type === "tool-call")
        this.#calls.set(block.id, { name: block.name, input: block.input, born: replies });
    const kind = resumed === undefined ? contextKind(message, this.#calls) : resumed.kind;
    for (const block of message.content) if (block.type === "tool-result") this.#calls.delete(block.callId);
    this.#recent.push([message.id, replies, kind ?? null]);
    if (!isIndexed(message)) return;
    if (kind !== undefined && resumed === undefined) {
      const births = this.#births.get(replies) ?? {};
      births[kind] = (births[kind] ?? 0) + 1;
      this.#births.set(replies, births);
    }
    const holder: Holder = { kind, born: replies };
    if (resumed !== undefined) {
      this.#unread.push({ message, holder });
      return;
    }
    let born = this.#unitsBorn.get(replies);
    if (born === undefined) this.#unitsBorn.set(replies, (born = []));
    for (const unit of messageUnits(message)) {
      this.#holders.set(unit, holder);
      born.push(unit);
    }
  }

  /** The newest followed message holding `unit`: in `#holders`, else among the unread messages of a resume. */
  #holderOf(unit: GroundingUnit): Holder | undefined {
    const known = this.#holders.get(unit);
    if (known !== undefined || this.#unread.length === 0) return known;
    // Every unit of a message is a substring of one of its texts: only those that contain it are read.
    const needle = unit.slice(unit.indexOf(":") + 1);
    for (let index = this.#unread.length - 1; index >= 0; index--) {
      const { message, holder } = this.#unread[index]!;
      if (textOf(message).includes(needle) && messageUnits(message).has(unit)) return holder;
    }
    return undefined;
  }

  /** A reply: every followed piece is in the history at its age; those holding what the reply copied were used. */
  #reply(message: Message, indexed: boolean): void {
    const now = this.#replies;
    // A reply too large to read is not counted (it would count every piece as unused).
    if (indexed) {
      for (const [born, births] of this.#births) {
        const bucket = reuseBucket(now - born);
        for (const kind of CONTEXT_KINDS) this.#alive[kind][bucket]! += births[kind] ?? 0;
      }
      const sources = new Set<Holder>();
      for (const span of replySpans([message])) {
        const holder = this.#holderOf(span.unit);
        if (holder?.kind !== undefined && now - holder.born < WINDOW) sources.add(holder);
      }
      for (const holder of sources) this.#used[holder.kind!][reuseBucket(now - holder.born)]!++;
    }
    this.#replies++;
    const expired = this.#replies - WINDOW;
    this.#births.delete(expired);
    // The units of the messages that are now too old to be followed go (unless a newer message holds them too).
    for (const unit of this.#unitsBorn.get(expired) ?? [])
      if (this.#holders.get(unit)?.born === expired) this.#holders.delete(unit);
    this.#unitsBorn.delete(expired);
    // The other records of what is too old go a window's worth at a time (a few hundred entries at most): memory
    // stays that of the recent messages.
    if (this.#replies % WINDOW === 0) {
      const followed = ([, born]: readonly [unknown, number, ...unknown[]]) => this.#replies - born < WINDOW;
      for (const [id, call] of this.#calls) if (!followed([id, call.born])) this.#calls.delete(id);
      this.#recent = this.#recent.filter(followed);
      this.#unread = this.#unread.filter(({ holder }) => followed([undefined, holder.born]));
    }
  }
}
