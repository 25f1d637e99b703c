import { z } from "zod";
import { systemClock, type Clock } from "../model/ids.ts";
import type { Message } from "../model/message.ts";
import { MAX_SESSION_ID_LENGTH, validate } from "../model/schemas.ts";
import type { Summarizer } from "../summarize/summarizer.ts";
import type { TokenCounter } from "../tokens/token-counter.ts";
import {
  CORE_MEMORY_KIND_ORDER,
  coreMemoriesBlock,
  fitBody,
  renderMemories,
  selectWithinBudget,
} from "./core-memory-text.ts";
import { DEFAULT_MEMORY_OWNER, type Memory, type MemoryScope, type MemoryStore } from "./memory-store.ts";

/** Options of `CoreMemoryBuilder`. */
export interface CoreMemoryOptions {
  readonly store: MemoryStore;
  readonly counter: TokenCounter;
  /** Compresses the memories when they do not fit; without one, the most important memories that fit are kept. */
  readonly summarizer?: Summarizer;
  /** Scopes to draw from (default all). */
  readonly scopes?: readonly MemoryScope[];
  /** Memories read per kind (default 100). */
  readonly perKindLimit?: number;
  /** Upper bound of the text handed to the summarizer, in tokens (default 16,000). */
  readonly maxSummarizerInputTokens?: number;
  /** Clock for expiry (default the wall clock; give the store's clock in tests). */
  readonly clock?: Clock;
  /** Cached blocks kept (default 256); the oldest is dropped first. */
  readonly cacheSize?: number;
}

/** What to build. */
export interface CoreMemoryRequest {
  /** Default `DEFAULT_MEMORY_OWNER`. */
  readonly owner?: string;
  /** The session the block is for: its own memories are left out (they are already in its history). */
  readonly excludeSessionId?: string;
  /** Budget of the whole block, heading included. */
  readonly maxTokens: number;
  readonly signal?: AbortSignal;
}

/** A built block. */
export interface CoreMemories {
  /** `# CORE MEMORIES` and the body; empty when there is nothing to remember. */
  readonly text: string;
  /** The body without the heading (for prompt assemblers that write the heading themselves). */
  readonly body: string;
  /** Tokens of `text`; never more than the budget. */
  readonly tokens: number;
  /** The memories the block was made from (all of them when compressed). */
  readonly memoryIds: readonly string[];
  /** True when the summarizer compressed the memories. */
  readonly compressed: boolean;
  /** The store version the block reflects. */
  readonly version: number;
  /**
   * Set when the summarizer failed: the block then holds the most important memories that fit verbatim, and
   * it is not cached, so the next build tries to compress again.
   */
  readonly error?: unknown;
}

interface CacheEntry {
  readonly version: number;
  /** The earliest expiry among the memories read (known once read): the block is stale from then on. */
  readonly freshness: { staleAt?: string };
  readonly result: Promise<CoreMemories>;
}

const requestSchema = z.object({
  owner: z.string().min(1).max(200).optional(),
  excludeSessionId: z.string().min(1).max(MAX_SESSION_ID_LENGTH).optional(),
  maxTokens: z.number().int().nonnegative(),
});

const COMPRESSION_FOCUS =
  "These are long-term memories for an agent's system prompt. Rewrite them as a compact list: keep every " +
  "preference and fact (the newer one wins when two conflict), then the outcomes of the most recent sessions; " +
  "shorten wording before dropping items.";

/**
 * Builds the `# CORE MEMORIES` block from the most relevant memories (preferences and facts first, then notes,
 * then recent session summaries) within a token budget, compressing with a summarizer when they do not fit.
 * A session's own memories are left out of its block, so its summary is never injected twice. Blocks are
 * cached by owner, excluded session, budget and store version, and rebuilt only when a memory changed (or one
 * of those read expired).
 *
 * @example
 * const core = new CoreMemoryBuilder({ store, counter, summarizer });
 * const { text } = await core.build({ excludeSessionId: "s1", maxTokens: 800 });
 */
export class CoreMemoryBuilder {
  readonly #options: CoreMemoryOptions;
  readonly #clock: Clock;
  readonly #cache = new Map<string, CacheEntry>();

  constructor(options: CoreMemoryOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
  }

  /** The block for a request: from the cache when no memory changed, else rebuilt. */
  async build(request: CoreMemoryRequest): Promise<CoreMemories> {
    const { owner = DEFAULT_MEMORY_OWNER, ...parsed } = validate(
      requestSchema,
      request,
      "core memory request",
    );
    const key = JSON.stringify([owner, parsed.excludeSessionId ?? null, parsed.maxTokens]);
    const version = await this.#options.store.version({ owner });
    const cached = this.#cache.get(key);
    const now = this.#clock().toISOString();
    const staleAt = cached?.freshness.staleAt;
    if (cached && cached.version === version && (staleAt === undefined || now < staleAt)) {
      return untilAborted(cached.result, request.signal);
    }
    const freshness: CacheEntry["freshness"] = {};
    const result = (async () => {
      const memories = await this.#read(owner, parsed.excludeSessionId);
      const expiries = memories.flatMap((memory) =>
        memory.expiresAt === undefined ? [] : [memory.expiresAt],
      );
      if (expiries.length > 0) freshness.staleAt = expiries.sort()[0]!;
      return this.#compose(memories, parsed.maxTokens, version);
    })();
    // Cached before the first await, so concurrent callers share this build.
    this.#remember(key, { version, freshness, result });
    const forget = () => {
      if (this.#cache.get(key)?.result === result) this.#cache.delete(key);
    };
    result.then((built) => built.error !== undefined && forget(), forget);
    return untilAborted(result, request.signal);
  }

  #remember(key: string, entry: CacheEntry): void {
    this.#cache.delete(key);
    this.#cache.set(key, entry);
    const limit = this.#options.cacheSize ?? 256;
    for (const oldest of this.#cache.keys()) {
      if (this.#cache.size <= limit) break;
      this.#cache.delete(oldest);
    }
  }

  async #read(owner: string, excludeSessionId: string | undefined): Promise<Memory[]> {
    const { store, scopes, perKindLimit = 100 } = this.#options;
    const lists = await Promise.all(
      CORE_MEMORY_KIND_ORDER.map((kind) =>
        store.list({
          owner,
          kinds: [kind],
          limit: perKindLimit,
          ...(scopes !== undefined && { scope: scopes }),
          ...(excludeSessionId !== undefined && { excludeSessionId }),
        }),
      ),
    );
    return lists.flat();
  }

  /**
   * The block for these memories, compressed by the summarizer when they do not fit. Shared by every caller that
   * asks meanwhile, so no caller's signal stops it: an aborted caller stops waiting (`untilAborted`), and the
   * block is cached for the next.
   */
  async #compose(memories: readonly Memory[], maxTokens: number, version: number): Promise<CoreMemories> {
    const { counter, summarizer } = this.#options;
    const all = renderMemories(memories);
    const selected = selectWithinBudget(memories, maxTokens, counter);
    const fitsWhole = selected.memories.length === memories.length;
    if (fitsWhole || summarizer === undefined) {
      return this.#result(selected.body, selected.memories, false, version);
    }
    const input = fitBody(all, this.#options.maxSummarizerInputTokens ?? 16_000, counter);
    try {
      const summary = await summarizer.summarize({
        messages: [memoriesMessage(input, this.#clock().toISOString())],
        focus: COMPRESSION_FOCUS,
        maxTokens: Math.max(1, maxTokens - counter.countText(coreMemoriesBlock("x"))),
      });
      return this.#result(fitBody(summary, maxTokens, counter), memories, true, version);
    } catch (error) {
      // Memory is an aid, not a reason to fail the turn: keep what fits verbatim and retry next time.
      return { ...this.#result(selected.body, selected.memories, false, version), error };
    }
  }

  #result(body: string, memories: readonly Memory[], compressed: boolean, version: number): CoreMemories {
    const text = coreMemoriesBlock(body);
    return {
      text,
      body: body.trim(),
      tokens: text === "" ? 0 : this.#options.counter.countText(text),
      memoryIds: memories.map((memory) => memory.id),
      compressed,
      version,
    };
  }
}

function memoriesMessage(text: string, now: string): Message {
  const message: Message = {
    id: "core-memories-input",
    sessionId: "core-memories",
    seq: 0,
    turn: 1,
    role: "user",
    content: [{ type: "text", text }],
    createdAt: now,
  };
  return Object.freeze(message);
}

/** `result`, or the signal's reason as soon as it aborts (what `result` goes on to do is not stopped). */
function untilAborted<T>(result: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return result;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener("abort", onAbort, { once: true });
    result.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
