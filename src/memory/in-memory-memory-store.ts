import { NotFoundError, ValidationError } from "../errors/errors.ts";
import { searchTerms } from "../store/search-text.ts";
import {
  applyChanges,
  findDuplicate,
  isActive,
  matchesMemoryFilter,
  memoryStoreContext,
  mergeDuplicate,
  newMemory,
  newestFirst,
  type MemoryStoreContext,
} from "./memory-plan.ts";
import {
  DEFAULT_LIST_LIMIT,
  DEFAULT_SEARCH_LIMIT,
  parseMemoryChanges,
  parseMemoryFilter,
  parseMemoryInput,
  parseOwner,
} from "./memory-schemas.ts";
import type {
  AddMemoryResult,
  Memory,
  MemoryChanges,
  MemoryFilter,
  MemoryInput,
  MemorySearchHit,
  MemoryStore,
  MemoryStoreOptions,
  OwnerOption,
} from "./memory-store.ts";
import { matchedTermCount, memorySnippet, normalizeMemoryText } from "./memory-text.ts";

/** Share of the memory's words that are query words: the in-process stand-in for BM25 / ts_rank. */
function termDensity(normalized: string, terms: readonly string[]): number {
  const words = normalized.split(" ");
  const wanted = new Set(terms);
  return words.filter((word) => wanted.has(word)).length / words.length;
}

/**
 * Long-term memory in process memory: the reference implementation of the conformance suite, and the store
 * for tests and short-lived agents. Every method runs synchronously inside, so each one is atomic.
 *
 * @example
 * const store = new InMemoryMemoryStore();
 * await store.add({ kind: "fact", content: "The staging database listens on port 5433" });
 * const [hit] = await store.search("staging port");
 */
export class InMemoryMemoryStore implements MemoryStore {
  readonly #memories = new Map<string, Memory>();
  readonly #versions = new Map<string, number>();
  readonly #context: MemoryStoreContext;

  constructor(options: MemoryStoreOptions = {}) {
    this.#context = memoryStoreContext(options);
  }

  #now(): string {
    return this.#context.clock().toISOString();
  }

  #bump(owner: string): void {
    this.#versions.set(owner, (this.#versions.get(owner) ?? 0) + 1);
  }

  #active(id: string, owner: string, now: string): Memory | undefined {
    const memory = this.#memories.get(id);
    return memory !== undefined && memory.owner === owner && isActive(memory, now) ? memory : undefined;
  }

  async add(input: MemoryInput): Promise<AddMemoryResult> {
    const parsed = parseMemoryInput(input);
    const now = this.#now();
    const candidates = [...this.#memories.values()]
      .filter((memory) => memory.owner === parsed.owner && isActive(memory, now))
      .sort(newestFirst);
    const duplicate = findDuplicate(candidates, parsed);
    if (duplicate) {
      const merged = mergeDuplicate(duplicate, parsed, now);
      this.#memories.set(merged.id, merged);
      this.#bump(parsed.owner);
      return { memory: merged, deduplicated: true };
    }
    const id = parsed.id ?? this.#context.ids("mem");
    if (this.#memories.has(id))
      throw new ValidationError(`memory id "${id}" is already taken; pass another id`);
    const memory = newMemory(parsed, id, now);
    this.#memories.set(id, memory);
    this.#bump(parsed.owner);
    return { memory, deduplicated: false };
  }

  async get(id: string, options?: OwnerOption): Promise<Memory | undefined> {
    return this.#active(id, parseOwner(options), this.#now());
  }

  async update(id: string, changes: MemoryChanges, options?: OwnerOption): Promise<Memory> {
    const owner = parseOwner(options);
    const parsed = parseMemoryChanges(changes);
    const now = this.#now();
    const existing = this.#active(id, owner, now);
    if (!existing)
      throw new NotFoundError("memory", id, `owner "${owner}" has no such memory; list them to see the ids`);
    const updated = applyChanges(existing, parsed, now);
    this.#memories.set(id, updated);
    this.#bump(owner);
    return updated;
  }

  async delete(id: string, options?: OwnerOption): Promise<boolean> {
    const owner = parseOwner(options);
    if (this.#memories.get(id)?.owner !== owner) return false;
    this.#memories.delete(id);
    this.#bump(owner);
    return true;
  }

  async search(query: string, options?: MemoryFilter): Promise<MemorySearchHit[]> {
    const terms = searchTerms(query);
    const filter = parseMemoryFilter(options, DEFAULT_SEARCH_LIMIT);
    const now = this.#now();
    const scored = [];
    for (const memory of this.#memories.values()) {
      if (!isActive(memory, now) || !matchesMemoryFilter(memory, filter)) continue;
      const normalized = normalizeMemoryText(memory.content);
      const matchedTerms = matchedTermCount(normalized, terms);
      if (matchedTerms > 0) scored.push({ memory, matchedTerms, density: termDensity(normalized, terms) });
    }
    scored.sort(
      (first, second) =>
        second.matchedTerms - first.matchedTerms ||
        second.density - first.density ||
        newestFirst(first.memory, second.memory),
    );
    return scored.slice(0, filter.limit).map(({ memory, matchedTerms }) => ({
      memory,
      matchedTerms,
      snippet: memorySnippet(memory.content, terms),
    }));
  }

  async list(options?: MemoryFilter): Promise<Memory[]> {
    const filter = parseMemoryFilter(options, DEFAULT_LIST_LIMIT);
    const now = this.#now();
    return [...this.#memories.values()]
      .filter((memory) => isActive(memory, now) && matchesMemoryFilter(memory, filter))
      .sort(newestFirst)
      .slice(0, filter.limit);
  }

  async purgeExpired(): Promise<number> {
    const now = this.#now();
    let purged = 0;
    for (const memory of [...this.#memories.values()]) {
      if (isActive(memory, now)) continue;
      this.#memories.delete(memory.id);
      this.#bump(memory.owner);
      purged++;
    }
    return purged;
  }

  async version(options?: OwnerOption): Promise<number> {
    return this.#versions.get(parseOwner(options)) ?? 0;
  }

  async close(): Promise<void> {}
}
