import { contextKind, type ContextKind } from "../metrics/context-kind.ts";
import { messageUnits, type GroundingUnit } from "../metrics/grounding-units.ts";
import { replySpans } from "../metrics/reply-spans.ts";
import type { Message, ToolCallBlock } from "../model/message.ts";
import { nonIncreasingFit, REUSE_AGE_LIMITS, type ReuseRates } from "./reuse-rates.ts";

const KINDS: readonly ContextKind[] = ["read", "search", "edit", "shell", "other", "written"];
const BUCKETS = REUSE_AGE_LIMITS.length;
/** Ages below the last bucket's: older pieces are not followed (that bucket keeps the prior's rate). */
const WINDOW = REUSE_AGE_LIMITS.at(-2)! + 1;

/** What a session's agent used again so far, as a governor state keeps it (see `SessionReuse`). */
export interface SessionReuseCounts {
  /** Assistant replies seen. */
  readonly replies: number;
  /** Per kind and age bucket: replies the pieces of that kind and age were in the history for… */
  readonly alive: Readonly<Record<ContextKind, readonly number[]>>;
  /** …and how many of those replies used them. */
  readonly used: Readonly<Record<ContextKind, readonly number[]>>;
}

type Rows = Record<ContextKind, number[]>;
/** The newest message holding a unit: a piece of context (its kind) or any other message, and its birth. */
interface Holder {
  readonly kind: ContextKind | undefined;
  readonly born: number;
}

const emptyRows = (): Rows =>
  Object.fromEntries(KINDS.map((kind) => [kind, Array.from({ length: BUCKETS }, () => 0)])) as Rows;
const copyRows = (rows: Readonly<Record<ContextKind, readonly number[]>>): Rows =>
  Object.fromEntries(KINDS.map((kind) => [kind, [...rows[kind]]])) as Rows;

function bucketOf(age: number): number {
  const bucket = REUSE_AGE_LIMITS.findIndex((limit) => age <= limit);
  return bucket < 0 ? BUCKETS - 1 : bucket;
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
  readonly #holders = new Map<GroundingUnit, Holder>();
  /** Tool calls whose results have not arrived (they say what kind a result is). */
  readonly #calls = new Map<string, Pick<ToolCallBlock, "name" | "input">>();

  constructor(saved?: SessionReuseCounts) {
    this.#alive = saved === undefined ? emptyRows() : copyRows(saved.alive);
    this.#used = saved === undefined ? emptyRows() : copyRows(saved.used);
    this.#replies = saved?.replies ?? 0;
  }

  /**
   * A tracker carrying on from `saved` after the messages it had seen, the first `covered` of `history`: the
   * recent messages whose pieces it still follows are read again (bounded by the followed ages, not the
   * history). Without `saved` (a state stored before it was kept) the whole covered history is counted again.
   */
  static resume(
    saved: SessionReuseCounts | undefined,
    history: readonly Message[],
    covered: number,
  ): SessionReuse {
    if (saved === undefined) {
      const tracker = new SessionReuse();
      for (const message of history.slice(0, covered)) tracker.observe(message);
      return tracker;
    }
    const tracker = new SessionReuse(saved);
    // Back to the oldest message whose pieces are still followed: fewer than WINDOW replies after it.
    let start = covered;
    for (let after = 0; start > 0 && after < WINDOW; start--) {
      const message = history[start - 1]!;
      if (message.kind === undefined && message.role === "assistant") after++;
    }
    let replies = saved.replies;
    for (let index = start; index < covered; index++)
      if (history[index]!.kind === undefined && history[index]!.role === "assistant") replies--;
    for (let index = start; index < covered; index++) {
      const message = history[index]!;
      if (message.kind !== undefined) continue;
      if (message.role === "assistant") replies++;
      tracker.#register(message, replies);
    }
    return tracker;
  }

  /** Takes in the next message of the session (importer markers and summaries are not the agent's context). */
  observe(message: Message): void {
    if (message.kind !== undefined) return;
    if (message.role === "assistant") this.#reply(message);
    this.#register(message, this.#replies);
  }

  /** The counts so far, as a governor state keeps them. */
  counts(): SessionReuseCounts {
    return { replies: this.#replies, alive: copyRows(this.#alive), used: copyRows(this.#used) };
  }

  /**
   * `prior` blended with this session's counts: per kind and age bucket, the prior counts as `weight` replies at
   * its rate beside the replies this session counted; the whole is then fitted not to rise with age.
   */
  rates(prior: ReuseRates, weight: number): ReuseRates {
    return Object.fromEntries(
      KINDS.map((kind) => {
        const used = this.#used[kind].map((count, bucket) => count + prior[kind][bucket]! * weight);
        const alive = this.#alive[kind].map((count) => count + weight);
        return [kind, nonIncreasingFit(used, alive)];
      }),
    ) as Record<ContextKind, number[]>;
  }

  /** A message as a holder of its units, a piece of context when it is one, seen after `replies` replies. */
  #register(message: Message, replies: number): void {
    for (const block of message.content) if (block.type === "tool-call") this.#calls.set(block.id, block);
    const kind = contextKind(message, this.#calls);
    for (const block of message.content) if (block.type === "tool-result") this.#calls.delete(block.callId);
    if (kind !== undefined) {
      const births = this.#births.get(replies) ?? {};
      births[kind] = (births[kind] ?? 0) + 1;
      this.#births.set(replies, births);
    }
    const holder: Holder = { kind, born: replies };
    for (const unit of messageUnits(message)) this.#holders.set(unit, holder);
  }

  /** A reply: every followed piece is in the history at its age; those holding what the reply copied were used. */
  #reply(message: Message): void {
    const now = this.#replies;
    for (const [born, births] of this.#births) {
      const bucket = bucketOf(now - born);
      for (const kind of KINDS) this.#alive[kind][bucket]! += births[kind] ?? 0;
    }
    const sources = new Set<Holder>();
    for (const span of replySpans([message])) {
      const holder = this.#holders.get(span.unit);
      if (holder?.kind !== undefined && now - holder.born < WINDOW) sources.add(holder);
    }
    for (const holder of sources) this.#used[holder.kind!][bucketOf(now - holder.born)]!++;
    this.#replies++;
    this.#births.delete(this.#replies - WINDOW);
    // Holders too old to be followed go, a window's worth at a time: memory stays that of the recent messages.
    if (this.#replies % WINDOW === 0)
      for (const [unit, holder] of this.#holders)
        if (this.#replies - holder.born >= WINDOW) this.#holders.delete(unit);
  }
}
