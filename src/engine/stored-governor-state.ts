/**
 * The governor's state as a session keeps it. A session writes its governor's state with every turn, and the
 * view in it grows with the session: a history message by id, a message governance rewrote (an offloaded tool
 * output's preview, a truncated argument) whole — 120 KB after 300 messages of a real Claude Code session, written
 * again on every turn. Stored, runs of history messages in seq order become one entry, and each rewritten
 * message is kept once as a blob of the session (content-addressed, so unchanged messages cost nothing on later
 * turns): what a turn writes stays small however long the session gets.
 */
import type { GovernorState, GovernorViewEntry } from "../governance/governor-state.ts";
import type { JsonValue, Message } from "../model/message.ts";
import type { BlobStore } from "../store/blob-store.ts";

/** Media type of a rewritten view message kept as a blob. */
export const VIEW_MESSAGE_MEDIA_TYPE = "application/vnd.ctxkit.view-message+json";

/**
 * One stored view entry: `count` history messages from `id` on, in seq order (one when `count` is absent), or
 * a rewritten message kept as the blob `ref`.
 */
type StoredViewEntry = { readonly id: string; readonly count?: number } | { readonly ref: string };

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
  readonly #stored = new WeakMap<Message, string>();

  constructor(blobs: BlobStore, sessionId: string) {
    this.#blobs = blobs;
    this.#sessionId = sessionId;
  }

  /**
   * The stored form of `state`, a governor's snapshot, whose view entries are the messages of `view` (the
   * governor's view, index for index); rewritten messages not stored yet are written as blobs first.
   */
  async encode(state: GovernorState, view: readonly Message[]): Promise<JsonValue> {
    const entries: StoredViewEntry[] = [];
    let run: { id: string; count: number; seq: number } | undefined;
    const endRun = () => {
      if (run !== undefined)
        entries.push(run.count === 1 ? { id: run.id } : { id: run.id, count: run.count });
      run = undefined;
    };
    for (const [index, entry] of state.view.entries()) {
      if ("message" in entry) {
        endRun();
        entries.push({ ref: await this.#store(entry.message) });
        continue;
      }
      const seq = view[index]?.id === entry.id ? view[index].seq : Number.NaN;
      if (run !== undefined && seq === run.seq + 1) {
        run.count++;
        run.seq = seq;
        continue;
      }
      endRun();
      run = { id: entry.id, count: 1, seq };
    }
    endRun();
    const { version: _version, view: _view, ...rest } = state;
    return { ...rest, version: 2, view: entries } as unknown as JsonValue;
  }

  /**
   * The governor state of a stored value, for `parseGovernorState` (which checks it): a version-1 value as it
   * is; undefined when the value names a blob or a history message that is gone (the view is then rebuilt).
   */
  async decode(value: JsonValue, history: readonly Message[]): Promise<JsonValue | undefined> {
    if (!isStoredState(value)) return value;
    const position = new Map(history.map((message, index) => [message.id, index]));
    const view: GovernorViewEntry[] = [];
    for (const entry of value.view) {
      if ("ref" in entry) {
        const message = parseMessage(await this.#blobs.getText(entry.ref));
        if (message === undefined) return undefined;
        this.#stored.set(message, entry.ref);
        view.push({ message });
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

  async #store(message: Message): Promise<string> {
    const known = this.#stored.get(message);
    if (known !== undefined) return known;
    const ref = await this.#blobs.putText(this.#sessionId, JSON.stringify(message), VIEW_MESSAGE_MEDIA_TYPE);
    this.#stored.set(message, ref);
    return ref;
  }
}

/** A stored view message, or undefined when its blob is gone or damaged. */
function parseMessage(text: string | undefined): Message | undefined {
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Message)
      : undefined;
  } catch {
    return undefined;
  }
}

function isStoredState(value: JsonValue): value is JsonValue & StoredGovernorState {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    value["version"] === 2 &&
    Array.isArray(value["view"])
  );
}
