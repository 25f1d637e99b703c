/**
 * The governor's state as a session keeps it. A session writes its governor's state with every turn, and the
 * view in it grows with the session: a history message by id, a message governance rewrote (an offloaded tool
 * output's preview, a truncated argument) whole — 120 KB after 300 messages of a real Claude Code session, written
 * again on every turn. Stored, runs of history messages in seq order become one entry, and rewritten messages
 * are kept once, as blobs of the session: the ones new in a turn together in one blob (one write), named by
 * later turns without being written again. What a turn writes stays small however long the session gets.
 */
import type { GovernorState, GovernorViewEntry } from "../governance/governor-state.ts";
import type { JsonValue, Message } from "../model/message.ts";
import type { BlobStore } from "../store/blob-store.ts";

/** Media type of the blob of rewritten view messages a turn stores (a JSON array of messages). */
export const VIEW_MESSAGES_MEDIA_TYPE = "application/vnd.ctxkit.view-messages+json";

/**
 * One stored view entry: `count` history messages from `id` on, in seq order (one when `count` is absent), or
 * a rewritten message, the `at`-th of the blob `ref`.
 */
type StoredViewEntry =
  { readonly id: string; readonly count?: number } | { readonly ref: string; readonly at: number };

/** Where a rewritten message is stored. */
interface StoredPlace {
  readonly ref: string;
  readonly at: number;
}

/** What a session stores: the governor's state with its view encoded (`version: 2`). */
interface StoredGovernorState extends Omit<GovernorState, "version" | "view"> {
  readonly version: 2;
  readonly view: readonly StoredViewEntry[];
}

/**
 * Encodes governor states for one session, remembering which rewritten messages it has already stored (the
 * governor keeps a rewritten message as the same object from one request to the next).
 *
 * @example
 * const codec = new GovernorStateCodec(store.blobs, sessionId);
 * const governorState = await codec.encode(governor.snapshot(), governor.view);
 * await store.appendTurn(sessionId, inputs, { governorState });
 * const stored = await store.loadGovernorState(sessionId);
 * const state = stored && (await codec.decode(stored, history)); // then parseGovernorState, governor.restore
 */
export class GovernorStateCodec {
  readonly #blobs: BlobStore;
  readonly #sessionId: string;
  readonly #stored = new WeakMap<Message, StoredPlace>();
  /** The view encoded last, its stored entries, and the view index each entry starts at. */
  #last:
    | {
        readonly view: readonly Message[];
        readonly entries: readonly StoredViewEntry[];
        readonly starts: readonly number[];
      }
    | undefined;

  constructor(blobs: BlobStore, sessionId: string) {
    this.#blobs = blobs;
    this.#sessionId = sessionId;
  }

  /**
   * The stored form of `state`, a governor's snapshot, whose view entries are the messages of `view` (the
   * governor's view, index for index); the rewritten messages not stored yet are written first, as one blob.
   * Between checkpoints the view only grows at its end: the entries of the part it shares with the view encoded
   * last are taken from then, and only the rest is encoded (a turn's encoding does not grow with the session).
   */
  async encode(state: GovernorState, view: readonly Message[]): Promise<JsonValue> {
    const { kept, from } = this.#unchanged(view);
    await this.#storeNew(state.view, from);
    const entries = this.#last?.entries.slice(0, kept) ?? [];
    const starts = this.#last?.starts.slice(0, kept) ?? [];
    let run: { id: string; count: number; seq: number; start: number } | undefined;
    const endRun = () => {
      if (run !== undefined) {
        entries.push(run.count === 1 ? { id: run.id } : { id: run.id, count: run.count });
        starts.push(run.start);
      }
      run = undefined;
    };
    for (let index = from; index < state.view.length; index++) {
      const entry = state.view[index]!;
      if ("message" in entry) {
        endRun();
        entries.push({ ...this.#stored.get(entry.message)! });
        starts.push(index);
        continue;
      }
      const message = view[index];
      const seq = message?.id === entry.id ? message.seq : Number.NaN;
      if (run !== undefined && seq === run.seq + 1) {
        run.count++;
        run.seq = seq;
        continue;
      }
      endRun();
      run = { id: entry.id, count: 1, seq, start: index };
    }
    endRun();
    this.#last = { view: [...view], entries, starts };
    const { version: _version, view: _view, ...rest } = state;
    return { ...rest, version: 2, view: [...entries] } as unknown as JsonValue;
  }

  /**
   * How many entries of the last encoding still hold (`kept`), and the view index the next one starts at
   * (`from`): every entry before the one holding the first message that changed (its run may go on).
   */
  #unchanged(view: readonly Message[]): { kept: number; from: number } {
    const last = this.#last;
    if (last === undefined) return { kept: 0, from: 0 };
    const shared = Math.min(view.length, last.view.length);
    let same = 0;
    while (same < shared && view[same] === last.view[same]) same++;
    // The entry holding view[same - 1] is encoded again: it may be a run that goes on.
    let kept = last.starts.length;
    while (kept > 0 && last.starts[kept - 1]! >= same) kept--;
    if (kept > 0) kept--;
    return { kept, from: kept < last.starts.length ? last.starts[kept]! : same };
  }
  /**
   * The governor state of a stored value, for `parseGovernorState` (which checks it): a version-1 value as it
   * is; undefined when the value names a blob or a history message that is gone (the view is then rebuilt).
   */
  async decode(value: JsonValue, history: readonly Message[]): Promise<JsonValue | undefined> {
    if (!isStoredState(value)) return value;
    const position = new Map(history.map((message, index) => [message.id, index]));
    const view: GovernorViewEntry[] = [];
    const blobs = new Map<string, readonly unknown[] | undefined>();
    for (const entry of value.view) {
      if ("ref" in entry) {
        if (!blobs.has(entry.ref)) blobs.set(entry.ref, parseArray(await this.#blobs.getText(entry.ref)));
        const message = blobs.get(entry.ref)?.[entry.at];
        if (!isObject(message)) return undefined;
        this.#stored.set(message as Message, { ref: entry.ref, at: entry.at });
        view.push({ message: message as Message });
        continue;
      }
      const start = position.get(entry.id);
      const count = entry.count ?? 1;
      if (start === undefined || !Number.isInteger(count) || count < 1) return undefined;
      const first = history[start]!;
      for (let offset = 0; offset < count; offset++) {
        const message = history[start + offset];
        if (message?.seq !== first.seq + offset) return undefined;
        view.push({ id: message.id });
      }
    }
    const stored: StoredGovernorState = value;
    return { ...stored, version: 1, view } as unknown as JsonValue;
  }

  /** Stores the view's rewritten messages (from index `from` on) not stored yet, together in one blob. */
  async #storeNew(view: readonly GovernorViewEntry[], from: number): Promise<void> {
    const fresh = new Set<Message>();
    for (let index = from; index < view.length; index++) {
      const entry = view[index]!;
      if ("message" in entry && !this.#stored.has(entry.message)) fresh.add(entry.message);
    }
    if (fresh.size === 0) return;
    const messages = [...fresh];
    const ref = await this.#blobs.putText(
      this.#sessionId,
      JSON.stringify(messages),
      VIEW_MESSAGES_MEDIA_TYPE,
    );
    messages.forEach((message, at) => this.#stored.set(message, { ref, at }));
  }
}

/** The messages of a stored blob, or undefined when it is gone or damaged. */
function parseArray(text: string | undefined): readonly unknown[] | undefined {
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

const isObject = (value: unknown): value is object =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function isStoredState(value: JsonValue): value is JsonValue & StoredGovernorState {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    value["version"] === 2 &&
    Array.isArray(value["view"])
  );
}
