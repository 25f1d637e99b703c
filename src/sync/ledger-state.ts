import { z } from "zod";
import { SchemaTooNewError } from "../errors/errors.ts";
import { validate } from "../model/schemas.ts";
import { ledgerEntrySchema, type LedgerEntry } from "./ledger-entry.ts";

/** Version of the persisted ledger state. Stored with every state so older data can be migrated. */
export const LEDGER_STATE_VERSION = 1;

/**
 * Everything a conversation ledger persists. Positions are absolute — counted over every entry ever appended —
 * so trimming the window from the front (`dropped` grows) never invalidates a cursor.
 */
export interface LedgerState {
  readonly version: typeof LEDGER_STATE_VERSION;
  /** The entries still in the window, oldest first; the first one has absolute position `dropped`. */
  readonly entries: readonly LedgerEntry[];
  /** How many entries were dropped from the front of the window. */
  readonly dropped: number;
  /** Per agent: the absolute position up to which its own session already knows the conversation. */
  readonly cursors: Readonly<Record<string, number>>;
  /** Per agent: the id of its executor session, to resume it after a reconnect or restart. */
  readonly executorSessionIds: Readonly<Record<string, string>>;
}

const position = z.number().int().nonnegative();

/** Schema of a persisted ledger state (cursors may not point past the end of the ledger). */
export const ledgerStateSchema = z
  .object({
    version: z.literal(LEDGER_STATE_VERSION),
    entries: z.array(ledgerEntrySchema),
    dropped: position,
    cursors: z.record(z.string().min(1), position),
    executorSessionIds: z.record(z.string().min(1), z.string().min(1)),
  })
  .refine(
    (state) => Object.values(state.cursors).every((cursor) => cursor <= state.dropped + state.entries.length),
    "a cursor points past the end of the ledger",
  );

/** A ledger state with nothing in it. */
export function emptyLedgerState(): LedgerState {
  return { version: LEDGER_STATE_VERSION, entries: [], dropped: 0, cursors: {}, executorSessionIds: {} };
}

/**
 * Validates a persisted state read from `where`; refuses states written by a newer ctxkit.
 *
 * @example
 * const state = parseLedgerState(JSON.parse(text), "/var/ctxkit/sync.json#session-1");
 */
export function parseLedgerState(value: unknown, where: string): LedgerState {
  const version = (value as { version?: unknown } | null)?.version;
  if (typeof version === "number" && version > LEDGER_STATE_VERSION) {
    throw new SchemaTooNewError(version, LEDGER_STATE_VERSION, where);
  }
  return validate(ledgerStateSchema, value, `ledger state at ${where}`);
}
