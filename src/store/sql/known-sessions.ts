/**
 * The sessions a store wrote last, as it left them: a later append to one of them can then send its rows and the
 * session's new totals in one statement (`StoreDialect.appendKnown`), which writes only while the stored session
 * is still the one remembered here. A stale entry costs a fallback, never a wrong write.
 */
import type { SessionRecord } from "../session-store.ts";

/** Sessions remembered at most (the oldest are forgotten first). */
const KNOWN_SESSIONS = 4096;

/** A session as a write of this store left it. */
export interface KnownSession {
  readonly session: SessionRecord;
  /** Whether a governor state is stored for it (a write must then replace or drop that too). */
  readonly governed: boolean;
}

/**
 * The latest record each recently written session had after its write.
 *
 * @example
 * known.remember(result.session, false);
 * known.get("s1")?.session.nextSeq;
 */
export class KnownSessions {
  readonly #entries = new Map<string, KnownSession>();
  readonly #limit: number;

  constructor(limit = KNOWN_SESSIONS) {
    this.#limit = limit;
  }

  get(sessionId: string): KnownSession | undefined {
    return this.#entries.get(sessionId);
  }

  /** Remembers `session` as stored now (the most recent entry). */
  remember(session: SessionRecord, governed: boolean): void {
    this.#entries.delete(session.id);
    this.#entries.set(session.id, { session, governed });
    if (this.#entries.size > this.#limit) this.#entries.delete(this.#entries.keys().next().value!);
  }

  forget(sessionId: string): void {
    this.#entries.delete(sessionId);
  }
}
