import { z } from "zod";

/**
 * One entry of a conversation ledger: a user message or an assistant reply, as plain text.
 * `agent` names the executor that handled the exchange (absent for the conversation agent's own replies);
 * `toolSummary` is the `[<agent> used: …]` prefix of an executor's reply.
 */
export interface LedgerEntry {
  readonly role: "user" | "assistant";
  readonly text: string;
  readonly agent?: string;
  readonly toolSummary?: string;
  /** ISO 8601 time the entry was recorded. */
  readonly at: string;
}

/** Schema of a ledger entry (persisted state, `session_context` backstory). */
export const ledgerEntrySchema = z.object({
  role: z.enum(["user", "assistant"]),
  text: z.string(),
  agent: z.string().min(1).optional(),
  toolSummary: z.string().optional(),
  at: z.string(),
});

/**
 * The text the conversation agent sees for an entry: the tool-summary prefix (when there is one), a blank line,
 * then the reply.
 *
 * @example
 * entryContent({ role: "assistant", text: "2 files", toolSummary: "[desktop used: Called: ls({})\nResult: a b]", at })
 * // "[desktop used: Called: ls({})\nResult: a b]\n\n2 files"
 */
export function entryContent(entry: Pick<LedgerEntry, "text" | "toolSummary">): string {
  return entry.toolSummary ? `${entry.toolSummary}\n\n${entry.text}` : entry.text;
}

// Compile-time check that the schema and the hand-written type agree.
type Assert<T extends true> = T;
type _EntryAssignable = Assert<z.output<typeof ledgerEntrySchema> extends LedgerEntry ? true : false>;
