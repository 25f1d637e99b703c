import { createHash } from "node:crypto";
import type { EngineSettings } from "../../engine/engine-settings.ts";
import type { GovernanceEvent } from "../../governance/events.ts";
import type { GovernorState } from "../../governance/governor-state.ts";
import { createGovernor, type RequestTokens } from "../../governance/governor.ts";
import type { Message } from "../../model/message.ts";

/** One stateless request to govern: a client's whole history and what is fixed around it. */
export interface StatelessRequest {
  /** Who asks and through which route (e.g. tenant and endpoint): conversations never share state across scopes. */
  readonly scope: string;
  /**
   * The request's fixed parts as text (system prompt, tool definitions): a conversation whose fixed parts change
   * is governed afresh.
   */
  readonly fixed: string;
  readonly fixedTokens: number;
  /** The conversation, oldest first, without the fixed parts. */
  readonly history: readonly Message[];
}

/** A stateless request after governance. */
export interface StatelessResult {
  /** The governed view (plus a budget-exit notice when one was added). */
  readonly messages: readonly Message[];
  /** For each governed message, the index of the history message it is unchanged from; undefined if rewritten. */
  readonly sources: readonly (number | undefined)[];
  readonly tokens: RequestTokens;
  readonly events: readonly GovernanceEvent[];
  readonly checkpoint: boolean;
  /** The governor's cache anchors, indices in `messages` (`GovernedRequest.cacheAnchors`). */
  readonly cacheAnchors: readonly number[];
  /** How the governor's state was found: the exact request seen before, a shorter history, or nothing. */
  readonly continued: "repeat" | "prefix" | "fresh";
}

/** Options of `StatelessGovernance`. */
export interface StatelessGovernanceOptions {
  /** Governor states kept (one per request seen, the most recently used kept). Default 2,000. */
  readonly maxStates?: number;
  /** Characters of JSON the kept states may hold in all (their rewritten messages). Default 128 Mi. */
  readonly maxStateCharacters?: number;
  /** Results kept for exact repeats (a retried request). Default 32. */
  readonly maxResults?: number;
  /** Characters of JSON the kept results may hold in all (whole payloads). Default 64 Mi. */
  readonly maxResultCharacters?: number;
}

const hash = (text: string): string => createHash("sha256").update(text).digest("base64url");

/** What identifies a message's content: ids, sequence numbers and times are the importer's, not the client's. */
const contentOf = (message: Message): string =>
  JSON.stringify([message.role, message.kind ?? null, message.content, message.metadata ?? null]);

/** A Map used as an LRU cache bounded by entries and by the size of what it holds. */
class Recent<Value> {
  readonly #entries = new Map<string, { value: Value; size: number }>();
  readonly #limit: number;
  readonly #maxSize: number;
  #size = 0;

  constructor(limit: number, maxSize: number) {
    this.#limit = limit;
    this.#maxSize = maxSize;
  }

  get(key: string): Value | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: Value, size: number): void {
    this.#drop(key);
    if (size > this.#maxSize) return;
    this.#entries.set(key, { value, size });
    this.#size += size;
    while (this.#entries.size > this.#limit || this.#size > this.#maxSize)
      this.#drop(this.#entries.keys().next().value!);
  }

  #drop(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#size -= entry.size;
  }
}

/**
 * Governs clients that send their whole history with every request (Claude Code, Codex with `store: false`, any
 * chat client without a session) so that the provider's prompt cache stays warm, without storing a session.
 *
 * Each request's history is fingerprinted message by message (a hash chain seeded by the scope and the fixed
 * parts). The governor's state after every request is kept under the fingerprint of the history it governed, so
 * the next request of the same conversation — the same history grown at its end — continues from it exactly as
 * a stateful session would: between checkpoints the governed view only grows at its end, and older history is
 * rewritten only when a checkpoint is due (the window fills) or pays for itself. The same request sent again (a
 * retry) gets the same payload back. Conversations are told apart by content alone, so two clients sending the
 * same history share its state, as they would share the provider's cache.
 *
 * State is kept in memory, bounded by count and size (the least recently used goes first): after a restart, or
 * once a conversation's state was evicted, its next request is governed afresh (one checkpoint).
 *
 * @example
 * const governance = new StatelessGovernance();
 * const result = await governance.govern({ scope: tenant, fixed: system, fixedTokens, history }, engine.settings);
 */
export class StatelessGovernance {
  readonly #states: Recent<GovernorState>;
  readonly #results: Recent<StatelessResult>;

  constructor(options: StatelessGovernanceOptions = {}) {
    this.#states = new Recent(options.maxStates ?? 2_000, options.maxStateCharacters ?? 128 * 1024 * 1024);
    this.#results = new Recent(options.maxResults ?? 32, options.maxResultCharacters ?? 64 * 1024 * 1024);
  }

  /**
   * Governs one request (see the class). `onEvent` sees the events of the governance that ran for it (none for
   * a repeat, which returns the earlier result).
   */
  async govern(
    request: StatelessRequest,
    settings: EngineSettings,
    onEvent?: (event: GovernanceEvent) => void,
  ): Promise<StatelessResult> {
    // Positional ids: the same message has the same id in every request of the conversation, so a kept state
    // (which names history messages by id) fits the next request's history.
    const history = request.history.map((message, index) => ({ ...message, id: `h${index}` }));
    const chain = [hash(JSON.stringify([request.scope, request.fixed, request.fixedTokens]))];
    for (const message of history) chain.push(hash(chain.at(-1)! + contentOf(message)));
    const key = chain.at(-1)!;

    const repeated = this.#results.get(key);
    if (repeated !== undefined) return { ...repeated, events: [], continued: "repeat" };

    const events: GovernanceEvent[] = [];
    const governor = createGovernor({
      contextWindow: settings.contextWindow,
      reservedOutputTokens: settings.reservedOutputTokens,
      counter: settings.counter,
      summarizer: settings.summarizer,
      pipeline: settings.pipeline,
      // The client runs its own tools: it has no recall_tool_output.
      recall: false,
      ids: settings.ids,
      clock: settings.clock,
      onEvent: (event) => {
        events.push(event);
        onEvent?.(event);
      },
    });
    let continued: StatelessResult["continued"] = "fresh";
    for (let covered = history.length - 1; covered > 0; covered--) {
      const state = this.#states.get(chain[covered]!);
      if (state !== undefined && governor.restore(state, history)) {
        continued = "prefix";
        break;
      }
    }
    const governed = await governor.prepare(history, { fixedTokens: request.fixedTokens });
    const state = governor.snapshot();
    this.#states.set(key, state, JSON.stringify(state).length);
    const position = new Map(history.map((message, index) => [message, index]));
    const result: StatelessResult = {
      messages: governed.messages,
      sources: governed.messages.map((message) => position.get(message)),
      tokens: governed.tokens,
      events,
      checkpoint: governed.checkpoint,
      cacheAnchors: governed.cacheAnchors ?? [],
      continued,
    };
    this.#results.set(key, result, JSON.stringify(result.messages).length);
    return result;
  }
}
