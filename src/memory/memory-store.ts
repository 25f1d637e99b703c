/**
 * The contract every long-term memory store implements (in process, SQLite, PostgreSQL). One conformance suite
 * (`memory-store-conformance.test-helpers.ts`) runs against each of them.
 *
 * Tenancy: every memory belongs to one owner and every method filters by owner (default `DEFAULT_MEMORY_OWNER`),
 * so one tenant never reads, changes or deletes another's memories, not even by id.
 *
 * Expiry: a memory whose `expiresAt` is not after the store's clock is treated as gone by every read;
 * `purgeExpired` deletes such rows for good.
 */
import type { Clock, IdGenerator } from "../model/ids.ts";
import type { JsonValue } from "../model/message.ts";

/** What a memory is: a session's summary, a fact, a user preference, or a free note. */
export const MEMORY_KINDS = ["session-summary", "fact", "preference", "note"] as const;
/** One of `MEMORY_KINDS`. */
export type MemoryKind = (typeof MEMORY_KINDS)[number];

/** Who a memory applies to within its owner: the user, the current project, or everything. */
export const MEMORY_SCOPES = ["user", "project", "global"] as const;
/** One of `MEMORY_SCOPES`. */
export type MemoryScope = (typeof MEMORY_SCOPES)[number];

/** The owner used when none is given (a single-user, local setup). */
export const DEFAULT_MEMORY_OWNER = "local";

/** Metadata values (free-form JSON). */
export type MemoryMetadata = { readonly [key: string]: JsonValue };

/** One stored memory. */
export interface Memory {
  readonly id: string;
  /** Owner or tenant; every query filters on it. */
  readonly owner: string;
  readonly kind: MemoryKind;
  readonly scope: MemoryScope;
  readonly content: string;
  /** The session it was learned in (for `session-summary`, the session it summarises). */
  readonly sourceSessionId?: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** After this time the memory is gone for every read. */
  readonly expiresAt?: string;
  readonly metadata: MemoryMetadata;
}

/** Input of `add`. */
export interface MemoryInput {
  /** Default: a generated `mem_…` id. Ignored when the input is merged into a near-duplicate. */
  readonly id?: string;
  /** Default `DEFAULT_MEMORY_OWNER`. */
  readonly owner?: string;
  readonly kind: MemoryKind;
  /** Default `user`. */
  readonly scope?: MemoryScope;
  readonly content: string;
  readonly sourceSessionId?: string;
  /** An ISO 8601 time. */
  readonly expiresAt?: string;
  readonly metadata?: MemoryMetadata;
}

/** What `add` did: stored a new memory, or updated a near-identical one (see `memory-text.ts`). */
export interface AddMemoryResult {
  readonly memory: Memory;
  /** True when the input was merged into an existing memory instead of being added. */
  readonly deduplicated: boolean;
}

/** Changes of `update`; absent fields stay as they are. `expiresAt: null` removes the expiry. */
export interface MemoryChanges {
  readonly kind?: MemoryKind;
  readonly scope?: MemoryScope;
  readonly content?: string;
  readonly expiresAt?: string | null;
  /** Replaces the metadata. */
  readonly metadata?: MemoryMetadata;
}

/** Selects the owner of a single-memory operation. */
export interface OwnerOption {
  /** Default `DEFAULT_MEMORY_OWNER`. */
  readonly owner?: string;
}

/** Filters shared by `list` and `search`. */
export interface MemoryFilter extends OwnerOption {
  /** One scope or several; default all. */
  readonly scope?: MemoryScope | readonly MemoryScope[];
  /** Default all kinds. */
  readonly kinds?: readonly MemoryKind[];
  /** Only memories learned in this session. */
  readonly sourceSessionId?: string;
  /** Leave out memories learned in this session (a session's own summaries are already in its history). */
  readonly excludeSessionId?: string;
  /** Page size, 1–1000 (default 50 for list, 20 for search). */
  readonly limit?: number;
}

/** A memory matching a search, best first. */
export interface MemorySearchHit {
  readonly memory: Memory;
  /** How many distinct query words the memory contains. */
  readonly matchedTerms: number;
  /** About 160 characters around the first match. */
  readonly snippet: string;
}

/** Options every memory store factory accepts. */
export interface MemoryStoreOptions {
  readonly clock?: Clock;
  readonly ids?: IdGenerator;
}

/**
 * Durable long-term memory. Every write is atomic and bumps the owner's `version`.
 *
 * @example
 * const { memory } = await store.add({ kind: "preference", content: "Prefers tabs over spaces" });
 * const hits = await store.search("tabs", { kinds: ["preference"] });
 * const version = await store.version(); // changes whenever a memory of the owner changes
 */
export interface MemoryStore {
  /** Stores a memory, or updates the near-identical one already stored (same owner, scope and kind). */
  add(input: MemoryInput): Promise<AddMemoryResult>;
  get(id: string, options?: OwnerOption): Promise<Memory | undefined>;
  /** Throws `NotFoundError` when the owner has no such (unexpired) memory. */
  update(id: string, changes: MemoryChanges, options?: OwnerOption): Promise<Memory>;
  /** False when the owner has no such memory. */
  delete(id: string, options?: OwnerOption): Promise<boolean>;
  /**
   * Memories containing any word of `query` (whole words, case-insensitive), those matching more distinct
   * words first, then by the backend's text relevance, then newest first.
   */
  search(query: string, options?: MemoryFilter): Promise<MemorySearchHit[]>;
  /** Memories newest first (by `updatedAt`). */
  list(options?: MemoryFilter): Promise<Memory[]>;
  /** Deletes expired memories of every owner; returns how many. */
  purgeExpired(): Promise<number>;
  /** A counter that grows with every change to the owner's memories; cache derived text against it. */
  version(options?: OwnerOption): Promise<number>;
  close(): Promise<void>;
}
