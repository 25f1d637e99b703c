import { z } from "zod";
import { jsonObjectSchema, MAX_SESSION_ID_LENGTH, validate } from "../model/schemas.ts";
import type { JsonValue } from "../model/message.ts";
import { normalizeMemoryText } from "./memory-text.ts";
import {
  DEFAULT_MEMORY_OWNER,
  MEMORY_KINDS,
  MEMORY_SCOPES,
  type MemoryChanges,
  type MemoryFilter,
  type MemoryInput,
  type MemoryKind,
  type MemoryScope,
} from "./memory-store.ts";

/** Longest memory content, in characters. */
export const MAX_MEMORY_LENGTH = 100_000;
/** Default page sizes of `list` and `search`. */
export const DEFAULT_LIST_LIMIT = 50;
export const DEFAULT_SEARCH_LIMIT = 20;

const identifier = (what: string, max = 200) =>
  z
    .string()
    .min(1, `${what} must not be empty`)
    .max(max)
    .refine((value) => !value.includes("\u0000"), `${what} cannot contain the character U+0000 (NUL)`);

/** Schema of a memory kind. */
export const memoryKindSchema = z.enum(MEMORY_KINDS);
/** Schema of a memory scope. */
export const memoryScopeSchema = z.enum(MEMORY_SCOPES);

const isoTime = z.iso
  .datetime({ offset: true, error: "expected an ISO 8601 time such as 2025-01-31T12:00:00Z" })
  .transform((time) => new Date(time).toISOString());

const contentSchema = z
  .string()
  .max(MAX_MEMORY_LENGTH)
  .refine(
    (content) => normalizeMemoryText(content) !== "",
    "a memory needs at least one word of letters or digits",
  )
  // PostgreSQL text cannot hold U+0000, and a summary of a tool's binary output may: every store keeps U+FFFD.
  .transform((content) => content.replaceAll("\u0000", "\uFFFD"));

const metadataSchema = jsonObjectSchema;

/** Schema of `add`'s input. */
export const memoryInputSchema = z.object({
  id: identifier("a memory id").optional(),
  owner: identifier("the owner").optional(),
  kind: memoryKindSchema,
  scope: memoryScopeSchema.optional(),
  content: contentSchema,
  sourceSessionId: identifier("the source session id", MAX_SESSION_ID_LENGTH).optional(),
  expiresAt: isoTime.optional(),
  metadata: metadataSchema.optional(),
});

/** Schema of `update`'s changes. */
export const memoryChangesSchema = z.object({
  kind: memoryKindSchema.optional(),
  scope: memoryScopeSchema.optional(),
  content: contentSchema.optional(),
  expiresAt: isoTime.nullable().optional(),
  metadata: metadataSchema.optional(),
});

/** Schema of list and search filters. */
export const memoryFilterSchema = z.object({
  owner: identifier("the owner").optional(),
  scope: z.union([memoryScopeSchema, z.array(memoryScopeSchema).min(1)]).optional(),
  kinds: z.array(memoryKindSchema).min(1, "kinds must name at least one kind").optional(),
  sourceSessionId: identifier("the source session id", MAX_SESSION_ID_LENGTH).optional(),
  excludeSessionId: identifier("the excluded session id", MAX_SESSION_ID_LENGTH).optional(),
  limit: z.number().int().min(1).max(1000).optional(),
});

/** A validated `add` input with its defaults applied (except the id and times, which the store sets). */
export interface ParsedMemoryInput {
  readonly id?: string;
  readonly owner: string;
  readonly kind: MemoryKind;
  readonly scope: MemoryScope;
  readonly content: string;
  readonly sourceSessionId?: string;
  readonly expiresAt?: string;
  readonly metadata: { readonly [key: string]: JsonValue };
}

/**
 * Validates `add`'s input and applies the defaults (owner `local`, scope `user`, empty metadata).
 *
 * @example
 * parseMemoryInput({ kind: "fact", content: "The API runs on port 8080" }).scope; // "user"
 */
export function parseMemoryInput(input: MemoryInput): ParsedMemoryInput {
  const parsed = validate(memoryInputSchema, input, "memory");
  return {
    ...parsed,
    owner: parsed.owner ?? DEFAULT_MEMORY_OWNER,
    scope: parsed.scope ?? "user",
    metadata: parsed.metadata ?? {},
  };
}

/**
 * Validates `update`'s changes.
 *
 * @example
 * parseMemoryChanges({ expiresAt: null }); // removes the expiry
 */
export function parseMemoryChanges(changes: MemoryChanges): z.output<typeof memoryChangesSchema> {
  return validate(memoryChangesSchema, changes, "memory changes");
}

/** A validated filter: owner and limit resolved, scopes as a list (absent: all). */
export interface ParsedMemoryFilter {
  readonly owner: string;
  readonly scopes?: readonly MemoryScope[];
  readonly kinds?: readonly MemoryKind[];
  readonly sourceSessionId?: string;
  readonly excludeSessionId?: string;
  readonly limit: number;
}

/**
 * Validates a list or search filter; `defaultLimit` is 50 for list and 20 for search.
 *
 * @example
 * parseMemoryFilter({ scope: "project" }, 50).scopes; // ["project"]
 */
export function parseMemoryFilter(filter: MemoryFilter = {}, defaultLimit: number): ParsedMemoryFilter {
  const { owner, scope, limit, ...rest } = validate(memoryFilterSchema, filter, "memory filter");
  return {
    ...rest,
    owner: owner ?? DEFAULT_MEMORY_OWNER,
    ...(scope !== undefined && { scopes: typeof scope === "string" ? [scope] : scope }),
    limit: limit ?? defaultLimit,
  };
}

/**
 * Validates the owner of a single-memory operation.
 *
 * @example
 * parseOwner({}); // "local"
 */
export function parseOwner(options: { owner?: string } = {}): string {
  return validate(identifier("the owner").optional(), options.owner, "owner") ?? DEFAULT_MEMORY_OWNER;
}
