/**
 * The store's own lines in ctxkit JSONL (the `session` and `blob` types the format reserves for it). Each line
 * is built with its keys in one fixed order, so export → import → export gives the same bytes.
 *
 * `{"type":"session","id":…,"createdAt":…,…,"positions":[[seq,position]…],"summarized":[[seq,bySeq]…]}` carries
 * everything a `message` line does not: owner, agent, times, counters, usage, cost, sync states, the view
 * position of rows that are not at their seq (summaries) and which rows a summary replaced.
 * `{"type":"blob","session":…,"ref":…,"mediaType":…,"encoding":"utf8"|"base64","data":…}` carries one blob.
 */
import { z } from "zod";
import type { JsonValue } from "../../model/message.ts";
import { jsonObjectSchema, jsonValueSchema } from "../../model/schemas.ts";
import type { BlobData, SessionDump, SyncState } from "../session-store.ts";

const count = z.number().int().nonnegative();

/** Schema of a `session` line. */
export const sessionLineSchema = z.object({
  type: z.literal("session"),
  id: z.string().min(1),
  owner: z.string().optional(),
  agent: z.string().optional(),
  title: z.string().optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
  parentId: z.string().optional(),
  forkSeq: count.optional(),
  messageCount: count,
  turnCount: count,
  nextSeq: count,
  usage: z.object({ input: count, output: count, cacheRead: count, cacheWrite: count, reasoning: count }),
  cost: z.number().nonnegative(),
  metadata: jsonObjectSchema,
  origin: z.object({ format: z.string(), source: z.string(), sidechain: z.boolean().optional() }).optional(),
  syncStates: z
    .array(
      z.object({
        agent: z.string().min(1),
        cursor: jsonValueSchema,
        executorSessionId: z.string().optional(),
        updatedAt: z.string(),
      }),
    )
    .optional(),
  positions: z.array(z.tuple([count, count])).optional(),
  summarized: z.array(z.tuple([count, count])).optional(),
});

/** A parsed `session` line. */
export type SessionLine = z.output<typeof sessionLineSchema>;

/** Schema of a `blob` line. */
export const blobLineSchema = z.object({
  type: z.literal("blob"),
  session: z.string().min(1),
  ref: z.string().min(1),
  mediaType: z.string().min(1),
  encoding: z.enum(["utf8", "base64"]),
  data: z.string(),
});

/** A parsed `blob` line. */
export type BlobLine = z.output<typeof blobLineSchema>;

/** A copy without undefined entries, keys in their order. */
function defined(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined));
}

function syncStateLine(state: SyncState): Record<string, JsonValue> {
  return defined({
    agent: state.agent,
    cursor: state.cursor,
    executorSessionId: state.executorSessionId,
    updatedAt: state.updatedAt,
  }) as Record<string, JsonValue>;
}

/**
 * The `session` line of a dump.
 *
 * @example
 * JSON.stringify(sessionLine(await store.dumpSession("s1")));
 */
export function sessionLine(dump: SessionDump): Record<string, unknown> {
  const { session } = dump;
  const positions = dump.rows
    .filter((row) => row.position !== row.message.seq)
    .map((row) => [row.message.seq, row.position]);
  const summarized = dump.rows
    .filter((row) => row.summarizedBy !== undefined)
    .map((row) => [row.message.seq, row.summarizedBy]);
  return defined({
    type: "session",
    id: session.id,
    owner: session.owner,
    agent: session.agent,
    title: session.title,
    createdAt: session.createdAt,
    updatedAt: session.updatedAt,
    parentId: session.parentId,
    forkSeq: session.forkSeq,
    messageCount: session.messageCount,
    turnCount: session.turnCount,
    nextSeq: session.nextSeq,
    usage: {
      input: session.usage.input,
      output: session.usage.output,
      cacheRead: session.usage.cacheRead,
      cacheWrite: session.usage.cacheWrite,
      reasoning: session.usage.reasoning,
    },
    cost: session.cost,
    metadata: session.metadata,
    origin: session.origin && defined(pickOrigin(session.origin)),
    syncStates: dump.syncStates.length > 0 ? dump.syncStates.map(syncStateLine) : undefined,
    positions: positions.length > 0 ? positions : undefined,
    summarized: summarized.length > 0 ? summarized : undefined,
  });
}

function pickOrigin(origin: { format: string; source: string; sidechain?: boolean }) {
  return { format: origin.format, source: origin.source, sidechain: origin.sidechain };
}

/**
 * The `blob` line of one of a session's blobs: text as is, bytes in base64.
 *
 * @example
 * JSON.stringify(blobLine("s1", blob));
 */
export function blobLine(sessionId: string, blob: BlobData): Record<string, unknown> {
  return {
    type: "blob",
    session: sessionId,
    ref: blob.ref,
    mediaType: blob.mediaType,
    encoding: blob.isText ? "utf8" : "base64",
    data: blob.isText ? new TextDecoder().decode(blob.bytes) : Buffer.from(blob.bytes).toString("base64"),
  };
}

/**
 * The blob a `blob` line describes.
 *
 * @example
 * blobFromLine(line).ref;
 */
export function blobFromLine(line: BlobLine): BlobData {
  const isText = line.encoding === "utf8";
  const bytes = isText
    ? new TextEncoder().encode(line.data)
    : new Uint8Array(Buffer.from(line.data, "base64"));
  return { ref: line.ref, mediaType: line.mediaType, isText, bytes };
}
