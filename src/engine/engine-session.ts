import {
  assembleSystemPrompt,
  iterationBudgetSection,
  type PromptSection,
} from "../assembly/system-prompt.ts";
import { assemblePayload } from "../assembly/payload.ts";
import { inspectPayload } from "../assembly/inspect.ts";
import { contextStats, type ContextStats } from "../assembly/context-stats.ts";
import { Conversation, type AssistantInput, type ToolResultInput } from "../conversation/conversation.ts";
import { NotFoundError, ValidationError } from "../errors/errors.ts";
import { remapAnchors } from "../governance/anchor-remap.ts";
import { randomIds } from "../model/ids.ts";
import type { GovernanceEvent } from "../governance/events.ts";
import { Governor, type GovernorOptions, type RequestTokens } from "../governance/governor.ts";
import { MemoryOffloadStore } from "../governance/offload-store.ts";
import {
  governorStateNeedsOriginals,
  parseGovernorState,
  type GovernorState,
} from "../governance/governor-state.ts";
import { GovernorStateCodec } from "./stored-governor-state.ts";
import { isContextOverflowError } from "../errors/overflow-recognition.ts";
import { toolResultIndex, withCompactSummary } from "../model/compact-summary.ts";
import { toolCallsOf, toolResultsOf } from "../model/blocks.ts";
import type { ContentBlock, JsonValue, Message, MessageInput } from "../model/message.ts";
import type { CompactionInput, LoadStrategy, SessionRecord, SessionStore } from "../store/session-store.ts";
import { sessionOffloadStore, type BlobStore } from "../store/blob-store.ts";
import { inlineMedia } from "../store/media-blobs.ts";
import type { GovernancePipeline } from "../governance/pipeline.ts";
import { createRecallTool } from "../governance/recall-tool.ts";
import { createExtractiveSummarizer } from "../summarize/index.ts";
import type { EngineSettings } from "./engine-settings.ts";
import type { EngineTool } from "./engine-tool.ts";
import { PreparedRequest, type ToolDefinition } from "./prepared-request.ts";
import { runTurn, type CallModel, type RunOptions, type RunResult } from "./agent-run.ts";

/** Options of `prepare`. */
export interface PrepareRequestOptions {
  /** The system prompt: a string (one identity section) or ordered sections. */
  system?: string | readonly PromptSection[];
  tools?: readonly ToolDefinition[];
  /** The agent loop's step cap; adds the iteration-budget section. */
  maxSteps?: number;
  signal?: AbortSignal;
  /**
   * Media the store keeps as blob references: `inline` (default) reads their data back into the request, so
   * `toOpenAIChat` and the other conversions work on a session resumed after a restart as on a live one; `ref`
   * keeps the references (for a caller that inlines them itself when it sends, or shows placeholders).
   */
  media?: "inline" | "ref";
}

/**
 * What `recover` did to the view after a provider overflow: the `emergency-recovery` event, whose `stage` is one of
 * the CowAgent seed's two emergency stages (`trimmed`, then `cleared`).
 */
export type OverflowRecovery = Extract<GovernanceEvent, { type: "emergency-recovery" }>;

/** Options of `EngineSession.addUser`. */
export interface AddUserOptions {
  /**
   * Add the message to the messages not committed yet even when they hold a reply, instead of committing those
   * first. Default false. For input that arrives together with earlier messages (a proxy's request that carries
   * an assistant message between user messages), so that all of it is committed with the reply, or none of it.
   */
  readonly keepOpenTurn?: boolean;
}

/** A session's figures for `/context` and dashboards. */
export interface SessionStats extends ContextStats {
  readonly sessionId: string;
  readonly stored: SessionRecord | undefined;
  readonly contextWindow: number;
  readonly usable: number;
}

/**
 * One conversation, end to end: add the user's message, prepare each governed request, record replies and tool
 * results, commit the turn (one transaction). Created lazily by `engine.session(id)`: nothing is stored until
 * the first turn is committed, and a session that exists is loaded on first use.
 *
 * One writer at a time: a session holds one open turn. `run()` calls on one session run one after another, in
 * call order (a double submit waits for the first turn to finish, then is answered with it in its history). The
 * manual API (`addUser`, `prepare`, `record*`, `commit`, `interrupt`) is single-writer: do not interleave two
 * turns on one session object — their messages would share one open turn — and do not mix it with a `run()` in
 * progress. Callers that may race (two browser tabs, two requests of one chat) should `run()`, or queue their
 * turns per session themselves.
 */
export class EngineSession {
  readonly id: string;
  readonly #settings: EngineSettings;
  readonly #store: SessionStore;
  /** Stores the governor's state compactly (its rewritten messages once, as blobs). */
  readonly #stateCodec: GovernorStateCodec;
  #state: Promise<{ conversation: Conversation; governor: Governor }> | undefined;
  #expectedNextSeq = 0;
  /** The session's owner when it was loaded (or the owner it is created with); every write expects it. */
  #expectedOwner: string | null = null;
  #committedLength = 0;
  readonly #persistedSummaries = new Set<string>();
  #lastFixedTokens = 0;
  /** Token figures of the request prepared last, anchored on the usage its reply reports. */
  #lastPrepared: RequestTokens | undefined;
  /** Overflow recoveries since the last reply (at most two: trim, then clear). */
  #recoveries = 0;
  /** `recall_tool_output` over this session's offloads; null when the policy never offloads. */
  #recallTool: EngineTool | null | undefined;
  /** Settles when the last queued `run()` has finished: the next one starts then. */
  #runs: Promise<void> = Promise.resolve();

  /** @internal Use `engine.session(id)`. */
  constructor(id: string, settings: EngineSettings) {
    this.id = id;
    this.#settings = settings;
    this.#store = settings.store;
    this.#stateCodec = new GovernorStateCodec(settings.store.blobs, id);
  }

  /** Loads the session (once; a load that failed is tried again by the next call). */
  #ready(): Promise<{ conversation: Conversation; governor: Governor }> {
    if (this.#state === undefined) {
      const loading = this.#load();
      this.#state = loading;
      loading.catch(() => {
        if (this.#state === loading) this.#state = undefined;
      });
    }
    return this.#state;
  }

  async #load(): Promise<{ conversation: Conversation; governor: Governor }> {
    const settings = this.#settings;
    const record = await this.#store.getSession(this.id);
    const owner = settings.sessionInit?.owner;
    if (owner !== undefined && record?.owner !== undefined && record.owner !== owner) {
      throw new NotFoundError("session", this.id, "this engine opens its owner's sessions only");
    }
    this.#expectedOwner = (record ? record.owner : owner) ?? null;
    const strategy: LoadStrategy = settings.restore ?? "full";
    const messages = record ? await this.#store.loadMessages(this.id, { strategy }) : [];
    this.#expectedNextSeq = record?.nextSeq ?? 0;
    for (const message of messages) if (message.kind === "summary") this.#persistedSummaries.add(message.id);
    const conversation = new Conversation({
      sessionId: this.id,
      messages,
      nextSeq: this.#expectedNextSeq,
      ids: settings.ids,
      clock: settings.clock,
    });
    this.#committedLength = conversation.length;
    const saved = record ? await this.#store.loadGovernorState(this.id) : undefined;
    const governor = new Governor({
      ...this.#governorOptions(),
      offloadStore: sessionOffloadStore(this.#store.blobs, this.id),
      ...(settings.memory !== undefined && { memorySink: (entry) => settings.memory!.remember(entry) }),
      onEvent: (event) => settings.onEvent?.(event, this.id),
    });
    // The governor as it was after the last commit: the same view and cache arithmetic, so the provider's cached
    // prefix survives the restart. A state another version wrote, or one that does not fit, is rebuilt instead.
    const decoded = saved === undefined ? undefined : await this.#stateCodec.decode(saved, messages);
    if (decoded !== undefined) {
      const state = safeGovernorState(decoded);
      // The reuse count follows recent messages, some of which a summary may have replaced in `messages`.
      const originals =
        state !== undefined && governorStateNeedsOriginals(state, messages)
          ? await this.#store.loadMessages(this.id, { strategy: "all" })
          : [];
      if (state !== undefined) governor.restore(state, messages, originals);
    }
    return { conversation, governor };
  }

  /** The governor settings of this session, without its side effects (offload store, memory sink, events). */
  #governorOptions() {
    const settings = this.#settings;
    return {
      contextWindow: settings.contextWindow,
      reservedOutputTokens: settings.reservedOutputTokens,
      counter: settings.counter,
      summarizer: settings.summarizer,
      pipeline: settings.pipeline,
      recall: settings.recall,
      ids: settings.ids,
      clock: settings.clock,
    } satisfies GovernorOptions;
  }

  /**
   * Opens a turn with the user's message. The messages added since the last commit stay uncommitted with it
   * while none of them is a reply (several user messages sent together, tool results): the next `commit` stores
   * them all with the reply in one transaction, and `interrupt` removes them all, so a failed request leaves
   * nothing behind and can be sent again as it was. When they hold a reply (an exchange not committed yet), that
   * exchange is committed first, unless `keepOpenTurn` is set. An empty message (no block but blank text) is
   * refused with a `ValidationError`.
   *
   * @example
   * await session.addUser("Here is the document: …");
   * await session.addUser("Summarise it."); // committed with the reply, or not at all
   */
  async addUser(content: string | readonly ContentBlock[], options: AddUserOptions = {}): Promise<Message> {
    if (isBlank(content)) {
      throw new ValidationError(
        "a user message needs content: pass non-blank text or at least one non-text block (image, file); " +
          "providers such as Anthropic and Gemini refuse empty messages",
        [{ path: "content", message: "empty user message" }],
      );
    }
    const { conversation } = await this.#ready();
    if (options.keepOpenTurn !== true && this.#holdsUncommittedReply(conversation)) await this.commit();
    return conversation.appendUser(content);
  }

  /** True when a message added since the last commit is an assistant message. */
  #holdsUncommittedReply(conversation: Conversation): boolean {
    return conversation
      .snapshot()
      .tail(this.#committedLength)
      .some((message) => message.role === "assistant");
  }

  /**
   * Governs and assembles the next request: fresh system prompt (with core memories when memory is on),
   * governed history, current input last. Throws `ContextOverflowError` when it cannot fit.
   */
  async prepare(options: PrepareRequestOptions = {}): Promise<PreparedRequest> {
    const { conversation, governor } = await this.#ready();
    const { prepared, fixedTokens } = await this.#prepareWith(governor, conversation, options);
    this.#lastFixedTokens = fixedTokens;
    this.#lastPrepared = prepared.tokens;
    return prepared;
  }

  /**
   * What `prepare` would send now, governed by a copy of the session's governor: nothing of the session changes
   * (the governor's state and so the next request, its stored state, events, offloaded outputs, memories). A
   * checkpoint due now is made with the extractive summarizer, so looking at a session never calls a model: its
   * summaries may read differently from those the next request will carry.
   *
   * @example
   * const next = await session.preview({ system: "You are terse." });
   * next.inspection.channels;
   */
  async preview(options: Omit<PrepareRequestOptions, "signal"> = {}): Promise<PreparedRequest> {
    const { conversation, governor } = await this.#ready();
    const sessionOffloads = sessionOffloadStore(this.#store.blobs, this.id);
    const offloads = new MemoryOffloadStore();
    const copy = new Governor({
      ...this.#governorOptions(),
      summarizer: createExtractiveSummarizer({ counter: this.#settings.counter }),
      // Its own ids: taking the session's would change the ids of what the session writes next.
      ids: randomIds,
      // Reads the session's offloads; what the copy offloads stays in memory.
      offloadStore: {
        putText: (content) => offloads.putText(content),
        getText: async (ref, range) =>
          (await offloads.getText(ref, range)) ?? sessionOffloads.getText(ref, range),
      },
    });
    copy.restore(governor.snapshot(), conversation.snapshot().messages);
    return (await this.#prepareWith(copy, conversation, options)).prepared;
  }

  async #prepareWith(
    governor: Governor,
    conversation: Conversation,
    options: PrepareRequestOptions,
  ): Promise<{ prepared: PreparedRequest; fixedTokens: number }> {
    const settings = this.#settings;
    const sections: PromptSection[] =
      typeof options.system === "string"
        ? [{ name: "identity", content: options.system }]
        : [...(options.system ?? [])];
    if (options.maxSteps !== undefined) sections.push(iterationBudgetSection(options.maxSteps));
    if (settings.memory !== undefined && !sections.some((section) => section.name === "core-memories")) {
      const budget = settings.coreMemoryTokens;
      const memories = await settings.memory.coreMemories(this.id, budget);
      sections.push({ name: "core-memories", content: memories, maxTokens: budget });
    }
    const system = assembleSystemPrompt(sections, settings.counter);
    const tools = options.tools ?? [];
    const fixedTokens =
      system.tokens + (tools.length > 0 ? settings.counter.countText(JSON.stringify(tools)) : 0);
    const governed = await governor.prepare(conversation.snapshot(), {
      fixedTokens,
      ...(options.signal !== undefined && { signal: options.signal }),
    });
    const assembled = assemblePayload(system, governed.messages);
    const payload =
      options.media === "ref"
        ? assembled
        : { ...assembled, messages: await inlineMedia(assembled.messages, this.#store.blobs) };
    const prepared = new PreparedRequest({
      sessionId: this.id,
      payload,
      tools,
      tokens: governed.tokens,
      events: governed.events,
      inspection: inspectPayload(assembled, system.sections, governor.tokensOf, governed.events),
      checkpoint: governed.checkpoint,
      loop: governed.loop,
      // Positions in the governed view; the payload leaves out its system messages.
      ...(governed.cacheAnchors !== undefined && {
        cacheAnchors: remapAnchors(governed.cacheAnchors, governed.messages, payload.messages),
      }),
    });
    return { prepared, fixedTokens };
  }

  /** Records the assistant's reply (text, reasoning, tool calls) with its usage. */
  async recordAssistant(input: AssistantInput): Promise<Message> {
    const { conversation, governor } = await this.#ready();
    const message = await conversation.appendAssistant(input);
    governor.recordSuccess();
    this.#recoveries = 0;
    if (this.#lastPrepared !== undefined && input.usage !== undefined) {
      governor.observeUsage(this.#lastPrepared, input.usage.input);
    }
    this.#lastPrepared = undefined;
    return message;
  }

  /**
   * Records tool results answering the latest assistant message. Each must answer a tool call of this session
   * that has no result yet: a result for a call the session does not hold is refused with a `NotFoundError`, a
   * second result for one call with a `ValidationError` (a model would never see either: the payload keeps one
   * result per call, right after it). A refused batch records none of its results.
   */
  async recordToolResults(results: readonly ToolResultInput[]): Promise<Message[]> {
    const { conversation } = await this.#ready();
    const snapshot = conversation.snapshot();
    const batch = new Set<string>();
    for (const { callId } of results) {
      const answered = batch.has(callId) || callState(snapshot, callId);
      if (answered === undefined) {
        throw new NotFoundError(
          "tool call",
          callId,
          "record results only for the tool calls of the assistant's reply, after recording that reply",
        );
      }
      if (answered) {
        throw new ValidationError(
          `tool call "${callId}" already has a result in session ${this.id}; record one result per call ` +
            "(nothing of this batch was recorded)",
          [{ path: "callId", message: `call ${callId} already answered` }],
        );
      }
      batch.add(callId);
    }
    const messages: Message[] = [];
    for (const result of results) messages.push(await conversation.appendToolResult(result));
    return messages;
  }

  /**
   * Attaches a pre-computed summary to a tool result already recorded (the LLMSession seed's `compact_summary`,
   * e.g. one computed in the background): governance sends it instead of the full result once the result is
   * older than the newest step (`useCompactSummaries`). A result of a committed turn is updated in the store at
   * once; one of the open turn is stored with the turn. Throws `NotFoundError` when no result of `callId` was
   * recorded in this session.
   *
   * @example
   * await session.recordToolResults([{ callId: "c1", toolName: "grep", content: hugeOutput }]);
   * await session.attachCompactSummary("c1", "37 matches, all in src/store; none in tests");
   */
  async attachCompactSummary(callId: string, summary: string): Promise<Message> {
    const { conversation, governor } = await this.#ready();
    const history = conversation.snapshot().messages;
    const index = toolResultIndex(history, callId);
    if (index < 0) {
      throw new NotFoundError("tool result", callId, "record the tool result before attaching its summary");
    }
    const updated = withCompactSummary(history[index]!, callId, summary);
    if (index < this.#committedLength) {
      await this.#store.attachCompactSummary(this.id, { messageId: updated.id, callId, summary });
    }
    await conversation.update(updated);
    governor.attachCompactSummary(callId, summary);
    return updated;
  }

  /** Records a reply or tool results: `record({ content, usage })` or `record([{ callId, toolName, content }])`. */
  async record(input: AssistantInput | readonly ToolResultInput[]): Promise<Message[]> {
    if (Array.isArray(input)) return this.recordToolResults(input as readonly ToolResultInput[]);
    return [await this.recordAssistant(input as AssistantInput)];
  }

  /**
   * Commits the open turn in one transaction, with the compactions governance made and the governor's state, so a
   * restarted process governs on as if it had never stopped. A concurrent writer on the same session raises
   * `ConcurrentWriteError` and nothing of this turn is written; the turn stays open, so take it back with
   * `interrupt()` (which reloads what the store holds) or drop the session with `engine.release(id)`, then send the
   * turn again. Resolves with the session's record as stored by this commit (undefined when there was nothing to
   * write).
   */
  async commit(): Promise<SessionRecord | undefined> {
    const { conversation, governor } = await this.#ready();
    const snapshot = conversation.snapshot();
    const fresh = snapshot.tail(this.#committedLength);
    const inputs: MessageInput[] = fresh.map(
      ({ id, sessionId: _sessionId, seq: _seq, turn: _turn, ...rest }) => ({ id, ...rest }),
    );
    const compactions = this.#unpersistedCompactions(governor.view, this.#expectedNextSeq + fresh.length);
    let stored: SessionRecord | undefined;
    if (inputs.length > 0 || compactions.length > 0) {
      stored = await this.#write(inputs, compactions, governor);
      this.#committedLength = snapshot.length;
    }
    conversation.commitTurn();
    return stored;
  }

  /** Appends messages and compactions with the governor's state, in one transaction; returns the stored record. */
  async #write(
    inputs: MessageInput[],
    compactions: CompactionInput[],
    governor: Governor,
  ): Promise<SessionRecord> {
    const result = await this.#store.appendTurn(this.id, inputs, {
      expectedNextSeq: this.#expectedNextSeq,
      expectedOwner: this.#expectedOwner,
      ...(this.#settings.sessionInit !== undefined && { session: this.#settings.sessionInit }),
      ...(compactions.length > 0 && { compactions }),
      governorState: await this.#stateCodec.encode(governor.snapshot(), governor.view),
    });
    for (const summary of result.summaries) this.#persistedSummaries.add(summary.id);
    this.#expectedNextSeq = result.session.nextSeq;
    (await this.#ready()).conversation.reserveSeq(this.#expectedNextSeq);
    return result.session;
  }

  /** The view's summaries not stored yet whose range is committed (below `seqLimit`), oldest first. */
  #unpersistedCompactions(view: readonly Message[], seqLimit: number): CompactionInput[] {
    const compactions: CompactionInput[] = [];
    for (const message of view) {
      if (message.kind !== "summary" || this.#persistedSummaries.has(message.id) || !message.summaryOf)
        continue;
      if (message.summaryOf.toSeq >= seqLimit) continue;
      const { id, content, summaryOf } = message;
      compactions.push({
        fromSeq: summaryOf.fromSeq,
        toSeq: summaryOf.toSeq,
        summary: { id, role: "user", kind: "summary", content, summaryOf },
      });
    }
    return compactions;
  }

  /**
   * Call when the model rejected the request just prepared as too long for its window (any provider's error shape,
   * see `isContextOverflowError`), then prepare the request again and resend it: the CowAgent seed's overflow
   * emergency. The first time, the whole view is summarised to long-term memory (when the engine has memory) and
   * cut to its last 5 turns, tool results and user texts clipped to 10,000 characters (`trimmed`); the second time
   * in a row, it is cleared down to the current instruction (`cleared`: tell the user). Only the governed view
   * changes; the store keeps the whole history. Resolves with the `emergency-recovery` event, or `undefined` when
   * `error` is no overflow or both stages were spent on this request: throw the error then.
   *
   * @example
   * try { reply = await callModel(request); } catch (error) {
   *   if ((await session.recover(error)) === undefined) throw error;
   *   reply = await callModel(await session.prepare(options));
   * }
   */
  async recover(error: unknown, signal?: AbortSignal): Promise<OverflowRecovery | undefined> {
    if (this.#recoveries >= 2 || !isContextOverflowError(error)) return undefined;
    const { governor } = await this.#ready();
    const { event } = await governor.recover(error, signal);
    this.#recoveries++;
    return event;
  }

  /**
   * Aborts the in-flight request and removes every message added since the last commit (the open turn, with the
   * user messages and tool results added before it); nothing of them was stored. Resolves with them, in order.
   */
  async interrupt(): Promise<Message[]> {
    const { conversation } = await this.#ready();
    this.#recoveries = 0;
    const uncommitted = conversation.snapshot().tail(this.#committedLength);
    const removed = await conversation.interrupt();
    this.#committedLength = Math.min(this.#committedLength, conversation.length);
    // The history now ends before what the governor last saw, so it would rebuild its view from the in-memory
    // originals and compact them again. The store holds the committed history with its summaries in place:
    // reload from it, so the next request keeps the summaries (and the prompt-cache prefix) it had. The reload
    // also drops the uncommitted messages before the open turn, which `conversation.interrupt` keeps.
    if (removed.length > 0 || uncommitted.length > 0) this.#state = undefined;
    return uncommitted.length > removed.length ? [...uncommitted] : removed;
  }

  /** The signal to pass to the model call; `interrupt()` aborts it. */
  async beginRequest(): Promise<AbortSignal> {
    return (await this.#ready()).conversation.beginRequest();
  }

  /** User-initiated compaction (`/compact [focus]`), persisted once the range it covers is committed. */
  async compact(options: { focus?: string } = {}): Promise<GovernanceEvent[]> {
    const { governor } = await this.#ready();
    const events = await governor.compact({
      ...options,
      fixedTokens: this.#lastFixedTokens,
      summarizer: this.#settings.compactSummarizer,
    });
    const compactions = this.#unpersistedCompactions(governor.view, this.#expectedNextSeq);
    if (compactions.length > 0) await this.#write([], compactions, governor);
    return events;
  }

  /**
   * Clears the context: everything so far is replaced by one marker summary, so the model starts fresh while the
   * store keeps every original row (hidden, not deleted).
   */
  async clear(): Promise<void> {
    const { conversation } = await this.#ready();
    if (conversation.hasOpenTurn) await this.commit();
    const messages = conversation.snapshot().messages;
    const last = messages.at(-1);
    if (!last) return;
    const cleared: CompactionInput = {
      // From the session's first row: loaded with `restore: "recent"`, the history in memory starts later, and
      // what it does not hold is hidden too.
      fromSeq: 0,
      toSeq: last.seq,
      summary: {
        role: "user",
        kind: "summary",
        content: [
          { type: "text", text: `[Context cleared by the user at ${this.#settings.clock().toISOString()}]` },
        ],
      },
    };
    const { summaries } = await this.#store.appendTurn(this.id, [], {
      expectedNextSeq: this.#expectedNextSeq,
      expectedOwner: this.#expectedOwner,
      compactions: [cleared],
    });
    const summary = summaries[0]!;
    this.#expectedNextSeq = summary.seq + 1;
    this.#persistedSummaries.add(summary.id);
    await conversation.replace([summary]);
    conversation.reserveSeq(this.#expectedNextSeq);
    this.#committedLength = 1;
  }

  /** Message count, roles, characters, tokens and window use of the governed view, plus the stored record. */
  async stats(): Promise<SessionStats> {
    const { conversation, governor } = await this.#ready();
    const view = governor.view.length > 0 ? governor.view : conversation.snapshot().messages;
    return {
      ...contextStats(view, governor.tokensOf, {
        usable: governor.window.usable,
        fixedTokens: this.#lastFixedTokens,
      }),
      sessionId: this.id,
      stored: await this.#store.getSession(this.id),
      contextWindow: governor.window.contextWindow,
      usable: governor.window.usable,
    };
  }

  /**
   * The tools the engine runs itself in `run()`: `recall_tool_output` when governance may move tool outputs or
   * arguments out of the view (its notices tell the model to call it), and `search_memory` when the engine has
   * long-term memory.
   */
  get engineTools(): readonly EngineTool[] {
    this.#recallTool ??= this.#settings.recall
      ? recallEngineTool(this.#settings.pipeline, this.#store.blobs, this.id)
      : null;
    const search = this.#settings.memory?.searchTool;
    return [
      ...(this.#recallTool === null ? [] : [this.#recallTool]),
      ...(search === undefined ? [] : [search]),
    ];
  }

  /**
   * Runs one agent turn: see `runTurn`. Runs on one session are queued: each starts when the previous one has
   * finished (answered, stopped, or failed and been interrupted), in call order, so concurrent calls (a double
   * submit) never share a turn; the second sees the first's turn in its history.
   */
  run(
    input: string | readonly ContentBlock[],
    callModel: CallModel,
    options?: RunOptions,
  ): Promise<RunResult> {
    const result = this.#runs.then(() => runTurn(this, input, callModel, options));
    this.#runs = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  /** The full in-memory history (committed and open turn). */
  async history(): Promise<readonly Message[]> {
    return (await this.#ready()).conversation.snapshot().messages;
  }

  /**
   * The newest message of `history()` that `test` accepts, searched from the end without copying the history
   * (a test that accepts a recent message costs O(1)); undefined when none does.
   */
  async findLast(test: (message: Message) => boolean): Promise<Message | undefined> {
    const snapshot = (await this.#ready()).conversation.snapshot();
    for (let index = snapshot.length - 1; index >= 0; index--) {
      const message = snapshot.at(index)!;
      if (test(message)) return message;
    }
    return undefined;
  }

  /**
   * True when the store holds writes this object has not seen: another process sharing the database (a second
   * server behind a load balancer) wrote the session since this object loaded it or last wrote it. False when it
   * has not been loaded yet (its first use reads the store). Call it between turns; a stale session is dropped
   * with `engine.release(id)`, and the next `engine.session(id)` reloads it as stored.
   *
   * @example
   * if (await session.isBehindStore()) engine.release(session.id);
   */
  async isBehindStore(): Promise<boolean> {
    const state = this.#state;
    if (state === undefined) return false;
    try {
      await state;
    } catch {
      return false; // a failed load is tried again by the next use
    }
    const record = await this.#store.getSession(this.id);
    return (record?.nextSeq ?? 0) !== this.#expectedNextSeq;
  }

  /** How many messages `history()` holds, without copying them. */
  async historyLength(): Promise<number> {
    return (await this.#ready()).conversation.length;
  }
}

/** True when `content` holds no block but blank text (an empty string, an empty list, whitespace only). */
function isBlank(content: string | readonly ContentBlock[]): boolean {
  if (typeof content === "string") return content.trim() === "";
  return (
    Array.isArray(content) && content.every((block) => block?.type === "text" && block.text.trim() === "")
  );
}

/**
 * Whether the tool call `callId` of the history already has a result (true/false), or undefined when the history
 * holds no such call. Searched from the end: the calls being answered are the newest.
 */
function callState(
  history: { readonly length: number; at(index: number): Message | undefined },
  callId: string,
): boolean | undefined {
  let answered = false;
  for (let index = history.length - 1; index >= 0; index--) {
    const message = history.at(index)!;
    if (message.role === "tool" && toolResultsOf(message).some((result) => result.callId === callId))
      answered = true;
    if (message.role === "assistant" && toolCallsOf(message).some((call) => call.id === callId))
      return answered;
  }
  return undefined;
}

/** A stored governor state this version can take back, or undefined (another version's: the view is rebuilt). */
function safeGovernorState(value: JsonValue): GovernorState | undefined {
  try {
    return parseGovernorState(value);
  } catch (error) {
    if (error instanceof ValidationError) return undefined;
    throw error;
  }
}

/** The engine's `recall_tool_output` for a session, or null when no processor of `pipeline` offloads. */
function recallEngineTool(
  pipeline: GovernancePipeline,
  blobs: BlobStore,
  sessionId: string,
): EngineTool | null {
  if (!pipeline.processors.some((processor) => processor.offloads === true)) return null;
  const recall = createRecallTool(sessionOffloadStore(blobs, sessionId));
  return { definition: recall.definition, execute: (input) => recall.execute(input) };
}
