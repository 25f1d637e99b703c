/**
 * The sessions a store wrote last, as it left them: a later append to one of them can then send its rows and the
 * session's new totals in one statement (`StoreDialect.appendKnown`), which writes only while the stored session
 * is still the one remembered here. A stale entry costs a fallback, never a wrong write.
 */
import type { SessionRecord } from "../session-store.ts";

/** Sessions remembered at most (the oldest are forgotten first). */
const KNOWN_SESSIONS = 4096;

/**
 * The latest record each recently written session had after its write.
 *
 * @example
 * known.remember(result.session);
 * known.get("s1")?.nextSeq;
 */
export class KnownSessions {
  readonly #entries = new Map<string, SessionRecord>();
  readonly #limit: number;

  constructor(limit = KNOWN_SESSIONS) {
    this.#limit = limit;
  }

  get(sessionId: string): SessionRecord | undefined {
    return this.#entries.get(sessionId);
  }

  /** Remembers `session` as stored now (the most recent entry). */
  remember(session: SessionRecord): void {
    this.#entries.delete(session.id);
    this.#entries.set(session.id, session);
    if (this.#entries.size > this.#limit) this.#entries.delete(this.#entries.keys().next().value!);
  }

  forget(sessionId: string): void {
    this.#entries.delete(sessionId);
  }
}
