import { z } from "zod";
import { ValidationError } from "../errors/errors.ts";
import { validate } from "../model/schemas.ts";
import type { ListOptions, SessionFilter, SessionPage, SessionRecord } from "./session-store.ts";

/** The default page size of `listSessions`. */
export const DEFAULT_PAGE_SIZE = 50;

/** Where a page starts: after this session in newest-first order (`updatedAt` desc, then `id` desc). */
export interface PageStart {
  readonly updatedAt: string;
  readonly id: string;
}

/** A validated list request. */
export interface ListQuery {
  readonly filter: SessionFilter;
  readonly limit: number;
  readonly after: PageStart | undefined;
}

const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

/** Schema of the filters shared by list, search and latest. */
export const sessionFilterSchema = z.object({
  owner: z.string().optional(),
  includeUnowned: z.boolean().optional(),
  agent: z.string().optional(),
  metadata: z.record(z.string().min(1), scalar).optional(),
});

const listSchema = sessionFilterSchema.extend({
  limit: z.number().int().min(1).max(1000).optional(),
  cursor: z.string().optional(),
});

/**
 * Validates list options and decodes the cursor.
 *
 * @example
 * parseListOptions({ owner: "ada", limit: 20 }).limit; // 20
 */
export function parseListOptions(options: ListOptions = {}): ListQuery {
  const checked = validate(listSchema, options, "list options");
  const { limit, cursor, ...filter } = checked;
  return {
    filter,
    limit: limit ?? DEFAULT_PAGE_SIZE,
    after: cursor === undefined ? undefined : decodeCursor(cursor),
  };
}

function decodeCursor(cursor: string): PageStart {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(value) && typeof value[0] === "string" && typeof value[1] === "string") {
      return { updatedAt: value[0], id: value[1] };
    }
  } catch {
    // reported below
  }
  throw new ValidationError("invalid list cursor; pass the nextCursor of the previous page unchanged");
}

/**
 * The page for `rows`, fetched with one row more than `limit` to know whether more follow.
 *
 * @example
 * toPage(rowsFetchedWithLimitPlusOne, 50);
 */
export function toPage(rows: readonly SessionRecord[], limit: number): SessionPage {
  if (rows.length <= limit) return { sessions: rows };
  const sessions = rows.slice(0, limit);
  const last = sessions.at(-1)!;
  return {
    sessions,
    nextCursor: Buffer.from(JSON.stringify([last.updatedAt, last.id])).toString("base64url"),
  };
}

/**
 * True when `session` passes `filter` (the in-memory form of the backends' SQL filters).
 *
 * @example
 * matchesFilter(session, { owner: "ada", metadata: { project: "x" } });
 */
export function matchesFilter(session: SessionRecord, filter: SessionFilter): boolean {
  if (filter.owner !== undefined && session.owner !== filter.owner) {
    if (filter.includeUnowned !== true || session.owner !== undefined) return false;
  }
  if (filter.agent !== undefined && session.agent !== filter.agent) return false;
  for (const [key, value] of Object.entries(filter.metadata ?? {})) {
    if (!Object.hasOwn(session.metadata, key) || session.metadata[key] !== value) return false;
  }
  return true;
}

/**
 * Newest-first order of sessions: `updatedAt` descending, then `id` descending.
 *
 * @example
 * sessions.sort(newestFirst);
 */
export function newestFirst(a: SessionRecord, b: SessionRecord): number {
  if (a.updatedAt !== b.updatedAt) return a.updatedAt < b.updatedAt ? 1 : -1;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}
