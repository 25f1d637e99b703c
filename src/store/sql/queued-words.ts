/**
 * The search words of message rows still queued for indexing, as both dialects read them back: from the stored
 * body, matched the way the text index would match them (every term a whole word).
 */
import type { Message } from "../../model/message.ts";
import { searchTextOf } from "../search-text.ts";
import type { RecentBodies } from "./recent-bodies.ts";

/** A queued message row as read back: its place and its stored body. */
export interface QueuedRow {
  readonly session_id: string;
  readonly seq: number;
  readonly body: string;
}

/**
 * The words of a stored body ("" for a body that cannot be read: it matches nothing, as a damaged row).
 *
 * @example
 * wordsOfBody('{"role":"user","content":[{"type":"text","text":"Hi there"}]}'); // "hi there"
 */
export function wordsOfBody(body: string): string {
  try {
    const message = JSON.parse(body) as Pick<Message, "content">;
    return Array.isArray(message.content) ? searchTextOf(message) : "";
  } catch {
    return "";
  }
}

/**
 * The words of a queued row: from the message `recent` remembers for it (the same body text), else its body.
 *
 * @example
 * queuedWords(recent, row);
 */
export function queuedWords(recent: RecentBodies | undefined, row: QueuedRow): string {
  const message = recent?.take(row.session_id, row.seq, row.body);
  return message === undefined ? wordsOfBody(row.body) : searchTextOf(message);
}

/**
 * The rows whose words hold every term.
 *
 * @example
 * matchingRows(queued, ["deploy"]);
 */
export function matchingRows<Row extends { readonly body: string }>(
  rows: readonly Row[],
  terms: readonly string[],
): Row[] {
  return rows.filter((row) => {
    const words = new Set(wordsOfBody(row.body).split(" "));
    return terms.every((term) => words.has(term));
  });
}

/** A run of consecutive seqs of one session. */
export interface SeqRange {
  readonly sessionId: string;
  readonly from: number;
  readonly to: number;
}

/**
 * The runs of consecutive seqs of rows (one per turn, as a turn writes them).
 *
 * @example
 * seqRanges([{ session_id: "s", seq: 4 }, { session_id: "s", seq: 5 }]); // [{ sessionId: "s", from: 4, to: 5 }]
 */
export function seqRanges(
  rows: readonly { readonly session_id: string; readonly seq: number }[],
): SeqRange[] {
  const ranges: SeqRange[] = [];
  let current: { sessionId: string; from: number; to: number } | undefined;
  for (const row of rows) {
    if (current && current.sessionId === row.session_id && row.seq === current.to + 1) {
      current.to = row.seq;
      continue;
    }
    if (current) ranges.push(current);
    current = { sessionId: row.session_id, from: row.seq, to: row.seq };
  }
  if (current) ranges.push(current);
  return ranges;
}
