import { z } from "zod";
import type { Message } from "../model/message.ts";
import { validate } from "../model/schemas.ts";
import { sessionFilterSchema } from "./list-query.ts";
import { messageSearchSource, snippetAround } from "./search-text.ts";
import type { SearchHit, SearchOptions, SessionFilter, SessionRecord } from "./session-store.ts";

/** The default number of search hits. */
export const DEFAULT_SEARCH_LIMIT = 20;

const searchOptionsSchema = sessionFilterSchema.extend({
  limit: z.number().int().min(1).max(1000).optional(),
});

/**
 * Validates search options.
 *
 * @example
 * parseSearchOptions({ owner: "ada" }).limit; // 20
 */
export function parseSearchOptions(options: SearchOptions = {}): { filter: SessionFilter; limit: number } {
  const { limit, ...filter } = validate(searchOptionsSchema, options, "search options");
  return { filter, limit: limit ?? DEFAULT_SEARCH_LIMIT };
}

/**
 * A search hit: the session, the first matching message (if any) and a snippet around the match.
 *
 * @example
 * searchHit(record, firstMatch, ["deploy"]);
 */
export function searchHit(
  session: SessionRecord,
  match: Message | undefined,
  terms: readonly string[],
): SearchHit {
  if (!match) return { session, snippet: session.title ?? "" };
  return { session, seq: match.seq, snippet: snippetAround(messageSearchSource(match), terms) };
}
