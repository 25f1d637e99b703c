import { type z } from "zod";
import { ParseError } from "../../errors/errors.ts";
import type { TextOrLines } from "../../formats/text-lines.ts";
import { readCtxkitJsonl, type CtxkitConversationRecord } from "../../formats/ctxkit-jsonl/index.ts";
import type { Message } from "../../model/message.ts";
import { checkDump } from "../dump-check.ts";
import { DEFAULT_INLINE_MEDIA_LIMIT } from "../media-blobs.ts";
import { DEFAULT_PRICES, type PriceTable } from "../../pricing/model-prices.ts";
import type { BlobData, SessionDump, SessionStore, StoredRow } from "../session-store.ts";
import { conversationDump } from "./conversation-dump.ts";
import { blobFromLine, blobLineSchema, sessionLineSchema, type SessionLine } from "./session-lines.ts";

/** What one imported session holds. */
export interface ImportedSessionSummary {
  readonly id: string;
  readonly messages: number;
  readonly turns: number;
  readonly toolCalls: number;
}

/** Options of `importSessionsJsonl`. */
export interface ImportSessionsOptions {
  /** Names the file in errors. */
  readonly source: string;
  /**
   * `error` (default) refuses the import when a session already exists, before anything is written;
   * `replace` overwrites existing sessions; `skip` leaves them as they are and reports them in `skipped`.
   */
  readonly onExisting?: "error" | "replace" | "skip";
  /** Time stamped as `updatedAt` of conversations that have no `session` line (default: now). */
  readonly now?: string;
  /** Prices for conversations that have no `session` line. */
  readonly prices?: PriceTable;
  /** Called after each stored session. */
  readonly onProgress?: (done: number, total: number) => void;
}

interface Collected {
  conversation?: CtxkitConversationRecord;
  session?: { line: number; value: SessionLine };
  readonly blobs: BlobData[];
  readonly messages: Message[];
}

function parseLine<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  source: string,
  line: number,
  expected: string,
) {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw new ParseError(
    source,
    line,
    expected,
    `${issue?.path.join(".") || "record"}: ${issue?.message ?? "invalid"}`,
  );
}

function fromSessionLine(
  collected: Collected,
  line: number,
  value: SessionLine,
  source: string,
): SessionDump {
  const { type: _type, syncStates, positions, summarized, ...fields } = value;
  const seqs = new Set(collected.messages.map((message) => message.seq));
  const positionOf = new Map(positions ?? []);
  const summarizedBy = new Map(summarized ?? []);
  for (const seq of [...positionOf.keys(), ...summarizedBy.keys()]) {
    if (!seqs.has(seq))
      throw new ParseError(
        source,
        line,
        "positions and summarized marks of stored messages",
        `no message has seq ${seq}`,
      );
  }
  const rows = collected.messages.map((message): StoredRow => {
    const by = summarizedBy.get(message.seq);
    return {
      message,
      position: positionOf.get(message.seq) ?? message.seq,
      ...(by !== undefined && { summarizedBy: by }),
    };
  });
  return {
    session: { ...fields, executorSessionIds: {} },
    rows,
    blobs: collected.blobs,
    syncStates: (syncStates ?? []).map((state) => ({ ...state, cursor: state.cursor })),
  };
}

/**
 * Parses and validates a ctxkit JSONL file (its text, or its lines) into session dumps without writing anything. Sessions exported by
 * a store come back exactly; plain conversations (no `session` line) become sessions as a transcript import
 * would make them. A malformed line raises a `ParseError` naming the file and line.
 *
 * @example
 * const dumps = parseSessionsJsonl(text, { source: "backup.jsonl" });
 */
export function parseSessionsJsonl(
  text: TextOrLines,
  options: Omit<ImportSessionsOptions, "onExisting" | "onProgress">,
): SessionDump[] {
  const { source } = options;
  const collected = new Map<string, Collected>();
  const entry = (id: string): Collected => {
    let found = collected.get(id);
    if (!found) collected.set(id, (found = { blobs: [], messages: [] }));
    return found;
  };
  for (const { line, record } of readCtxkitJsonl(text, source)) {
    if (record.type === "message") entry(record.message.sessionId).messages.push(record.message);
    else if (record.type === "conversation") {
      const found = entry(record.id);
      if (found.conversation)
        throw new ParseError(
          source,
          line,
          "one conversation line per id",
          `"${record.id}" is declared twice`,
        );
      found.conversation = record;
    } else if (record.type === "session") {
      const value = parseLine(
        sessionLineSchema,
        record,
        source,
        line,
        "a session line {type, id, createdAt, …}",
      );
      const found = entry(value.id);
      if (found.session)
        throw new ParseError(source, line, "one session line per id", `"${value.id}" is declared twice`);
      found.session = { line, value };
    } else if (record.type === "blob") {
      const value = parseLine(
        blobLineSchema,
        record,
        source,
        line,
        "a blob line {type, session, ref, mediaType, encoding, data}",
      );
      entry(value.session).blobs.push(blobFromLine(value));
    }
  }
  const now = options.now ?? new Date().toISOString();
  const dumps: SessionDump[] = [];
  for (const [id, found] of collected) {
    if (found.session) {
      dumps.push(fromSessionLine(found, found.session.line, found.session.value, source));
      continue;
    }
    const conversation = {
      ...(found.conversation ?? { id, format: "ctxkit", source }),
      messages: found.messages,
    };
    const context = { now, prices: options.prices ?? DEFAULT_PRICES };
    dumps.push({ ...conversationDump(conversation, context), blobs: found.blobs });
  }
  return dumps.map((dump) => checkDump(dump, DEFAULT_INLINE_MEDIA_LIMIT));
}

/**
 * Summary figures of a dump.
 *
 * @example
 * summarizeDump(dump).toolCalls;
 */
export function summarizeDump(dump: SessionDump): ImportedSessionSummary {
  let toolCalls = 0;
  for (const row of dump.rows)
    for (const block of row.message.content) if (block.type === "tool-call") toolCalls++;
  return { id: dump.session.id, messages: dump.rows.length, turns: dump.session.turnCount, toolCalls };
}

/** What an import stored and left alone. */
export interface ImportResult {
  /** The sessions written, in file order. */
  readonly sessions: ImportedSessionSummary[];
  /** Ids of sessions that already existed and were left as they were (`onExisting: "skip"`). */
  readonly skipped: string[];
}

/**
 * Imports a ctxkit JSONL file into a store, all or nothing: everything is parsed and validated first, then
 * every session is written in one transaction (`restoreSessions`), so a failure part-way (a full disk, a kill)
 * leaves the store as it was. An existing session refuses the whole import unless `onExisting` says
 * `replace` or `skip`.
 *
 * @example
 * const { sessions } = await importSessionsJsonl(store, text, { source: "backup.jsonl" });
 */
export async function importSessionsJsonl(
  store: SessionStore,
  text: TextOrLines,
  options: ImportSessionsOptions,
): Promise<ImportResult> {
  const dumps = parseSessionsJsonl(text, options);
  return restoreDumps(store, dumps, options);
}

/**
 * Restores dumps into a store in one transaction (see `SessionStore.restoreSessions`).
 *
 * @example
 * await restoreDumps(store, dumps, { onExisting: "skip" });
 */
export async function restoreDumps(
  store: SessionStore,
  dumps: readonly SessionDump[],
  options: Pick<ImportSessionsOptions, "onExisting" | "onProgress">,
): Promise<ImportResult> {
  const { skipped } = await store.restoreSessions(dumps, {
    onExisting: options.onExisting ?? "error",
    ...(options.onProgress !== undefined && { onProgress: options.onProgress }),
  });
  const left = new Set(skipped);
  return {
    sessions: dumps.filter((dump) => !left.has(dump.session.id)).map(summarizeDump),
    skipped: [...skipped],
  };
}
