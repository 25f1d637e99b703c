/**
 * The backend-neutral decisions of a memory store: what a new, merged or changed memory looks like, which
 * stored memories a new one may duplicate, and which memories a filter selects. Backends only persist.
 */
import { randomIds, systemClock, type Clock, type IdGenerator } from "../model/ids.ts";
import type { ParsedMemoryFilter, ParsedMemoryInput, parseMemoryChanges } from "./memory-schemas.ts";
import type { Memory, MemoryStoreOptions } from "./memory-store.ts";
import { isNearDuplicate, normalizeMemoryText, shingleCount } from "./memory-text.ts";

/** Store options with their defaults applied. */
export interface MemoryStoreContext {
  readonly clock: Clock;
  readonly ids: IdGenerator;
}

/**
 * Applies the defaults of `MemoryStoreOptions`.
 *
 * @example
 * const context = memoryStoreContext({ clock: () => new Date(0) });
 */
export function memoryStoreContext(options: MemoryStoreOptions = {}): MemoryStoreContext {
  return { clock: options.clock ?? systemClock, ids: options.ids ?? randomIds };
}

/** The derived columns a backend stores beside the content to search and de-duplicate. */
export interface IndexedText {
  readonly normalized: string;
  readonly shingleCount: number;
}

/**
 * Normalised text and shingle count of a memory's content.
 *
 * @example
 * indexedText("Uses pnpm, not npm"); // { normalized: "uses pnpm not npm", shingleCount: 5 }
 */
export function indexedText(content: string): IndexedText {
  const normalized = normalizeMemoryText(content);
  return { normalized, shingleCount: shingleCount(normalized) };
}

/**
 * True while a memory has not expired at `now` (an ISO time).
 *
 * @example
 * isActive(memory, new Date().toISOString());
 */
export function isActive(memory: Pick<Memory, "expiresAt">, now: string): boolean {
  return memory.expiresAt === undefined || memory.expiresAt > now;
}

/**
 * A new memory from validated input.
 *
 * @example
 * newMemory(parseMemoryInput({ kind: "fact", content: "…" }), "mem_1", "2025-01-01T00:00:00.000Z");
 */
export function newMemory(input: ParsedMemoryInput, id: string, now: string): Memory {
  return Object.freeze({
    id,
    owner: input.owner,
    kind: input.kind,
    scope: input.scope,
    content: input.content,
    ...(input.sourceSessionId !== undefined && { sourceSessionId: input.sourceSessionId }),
    createdAt: now,
    updatedAt: now,
    ...(input.expiresAt !== undefined && { expiresAt: input.expiresAt }),
    metadata: input.metadata,
  });
}

/**
 * True when `candidate` may be a duplicate of `input` by its key: same owner, scope and kind, and for
 * `session-summary` the same source session. The text comparison is `isNearDuplicate`.
 *
 * @example
 * sameDuplicateKey(stored, input) && isNearDuplicate(indexedText(stored.content).normalized, normalized);
 */
export function sameDuplicateKey(candidate: Memory, input: ParsedMemoryInput): boolean {
  return (
    candidate.owner === input.owner &&
    candidate.scope === input.scope &&
    candidate.kind === input.kind &&
    (input.kind !== "session-summary" || candidate.sourceSessionId === input.sourceSessionId)
  );
}

/**
 * The first candidate (pass them newest first) that `input` near-duplicates, if any.
 *
 * @example
 * const existing = findDuplicate(candidates, input);
 */
export function findDuplicate(candidates: readonly Memory[], input: ParsedMemoryInput): Memory | undefined {
  const normalized = normalizeMemoryText(input.content);
  return candidates.find(
    (candidate) =>
      sameDuplicateKey(candidate, input) &&
      isNearDuplicate(normalizeMemoryText(candidate.content), normalized),
  );
}

/**
 * The stored memory after a near-duplicate `input` is merged into it: the newer wording and source session,
 * metadata merged (newer keys win), the later expiry (none when either has none), `updatedAt` now.
 *
 * @example
 * const merged = mergeDuplicate(existing, input, now);
 */
export function mergeDuplicate(existing: Memory, input: ParsedMemoryInput, now: string): Memory {
  const { expiresAt: _expiresAt, sourceSessionId, ...rest } = existing;
  const expiresAt =
    existing.expiresAt === undefined || input.expiresAt === undefined
      ? undefined
      : existing.expiresAt > input.expiresAt
        ? existing.expiresAt
        : input.expiresAt;
  const source = input.sourceSessionId ?? sourceSessionId;
  return Object.freeze({
    ...rest,
    content: input.content,
    ...(source !== undefined && { sourceSessionId: source }),
    updatedAt: now,
    ...(expiresAt !== undefined && { expiresAt }),
    metadata: { ...existing.metadata, ...input.metadata },
  });
}

/**
 * The memory after `changes` (validated by `parseMemoryChanges`); `expiresAt: null` removes the expiry.
 *
 * @example
 * applyChanges(memory, { content: "Uses pnpm 9" }, now);
 */
export function applyChanges(
  existing: Memory,
  changes: ReturnType<typeof parseMemoryChanges>,
  now: string,
): Memory {
  const { expiresAt: oldExpiry, ...rest } = existing;
  const expiresAt = changes.expiresAt === undefined ? oldExpiry : (changes.expiresAt ?? undefined);
  return Object.freeze({
    ...rest,
    ...(changes.kind !== undefined && { kind: changes.kind }),
    ...(changes.scope !== undefined && { scope: changes.scope }),
    ...(changes.content !== undefined && { content: changes.content }),
    ...(changes.metadata !== undefined && { metadata: changes.metadata }),
    ...(expiresAt !== undefined && { expiresAt }),
    updatedAt: now,
  });
}

/**
 * True when an (unexpired) memory passes a filter's owner, scope, kind and session conditions.
 *
 * @example
 * memories.filter((memory) => matchesMemoryFilter(memory, parseMemoryFilter({ kinds: ["fact"] }, 50)));
 */
export function matchesMemoryFilter(memory: Memory, filter: ParsedMemoryFilter): boolean {
  return (
    memory.owner === filter.owner &&
    (filter.scopes === undefined || filter.scopes.includes(memory.scope)) &&
    (filter.kinds === undefined || filter.kinds.includes(memory.kind)) &&
    (filter.sourceSessionId === undefined || memory.sourceSessionId === filter.sourceSessionId) &&
    (filter.excludeSessionId === undefined || memory.sourceSessionId !== filter.excludeSessionId)
  );
}

/**
 * Newest first by `updatedAt`, then by id (a total order every backend reproduces).
 *
 * @example
 * [...memories].sort(newestFirst);
 */
export function newestFirst(first: Memory, second: Memory): number {
  if (first.updatedAt !== second.updatedAt) return first.updatedAt < second.updatedAt ? 1 : -1;
  return first.id < second.id ? 1 : first.id > second.id ? -1 : 0;
}
