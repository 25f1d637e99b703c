import { contextStats } from "../assembly/context-stats.ts";
import type { AssistantInput, ToolResultInput } from "../conversation/conversation.ts";
import { NotFoundError, ValidationError } from "../errors/errors.ts";
import { isContextOverflowError } from "../errors/overflow-recognition.ts";
import type { GovernanceEvent } from "../governance/events.ts";
import type { Governor, RequestTokens } from "../governance/governor.ts";
import { toolResultIndex, withCompactSummary } from "../model/compact-summary.ts";
import type { ContentBlock, Message, MessageInput } from "../model/message.ts";
import type { SessionRecord } from "../store/session-store.ts";
import type { EngineSettings } from "./engine-settings.ts";
import type { EngineTool } from "./engine-tool.ts";
import type { PreparedRequest } from "./prepared-request.ts";
import { runTurn, type CallModel, type RunOptions, type RunResult } from "./agent-run.ts";
import { assembleRequest, previewGovernor } from "./request-assembly.ts";
import { sessionEngineTools } from "./session-engine-tools.ts";
import type { LoadedSession } from "./session-load.ts";
import { SessionLoader } from "./session-loader.ts";
import type {
  AddUserOptions,
  OverflowRecovery,
  PrepareRequestOptions,
  SessionStats,
} from "./session-types.ts";
import { holdsUncommittedReply, isBlank } from "./session-guards.ts";
import { SessionTurn } from "./session-turn.ts";
import { clearContext, unstoredCompactions, writeTurn } from "./session-writes.ts";
import { checkToolResults } from "./tool-result-check.ts";

export type {
  AddUserOptions,
  OverflowRecovery,
  PrepareRequestOptions,
  SessionStats,
} from "./session-types.ts";

/**
 * One conversation, end to end: open a turn with the user's message, send each governed request, record replies
 * and tool results, commit the turn (one transaction). Created lazily by `engine.session(id)`: nothing is stored
 * until the first turn is committed, and a session that exists is loaded on first use. The committed history and
 * the store's position live in the session's `Conversation`; the view and its figures in its governor.
 *
 * One writer at a time: a session holds one open turn (`begin()` hands it out). `run()` calls on one session run
 * one after another, in call order (a double submit waits for the first turn to finish, then is answered with it
 * in its history). The manual API (`addUser`, `prepare`, `record*`, `commit`, `interrupt`) is single-writer: do
 * not interleave two turns on one session object — their messages would share one open turn — and do not mix it
 * with a `run()` in progress. Callers that may race (two browser tabs, two requests of one chat) should `run()`,
 * or queue their turns per session themselves.
 */
export class EngineSession {
  readonly id: string;
  readonly #settings: EngineSettings;
  readonly #loader: SessionLoader;
  #lastFixedTokens = 0;
  /** Token figures of the request prepared last, anchored on the usage its reply reports. */
  #lastPrepared: RequestTokens | undefined;
  #engineTools: readonly EngineTool[] | undefined;
  /** Settles when the last queued `run()` has finished: the next one starts then. */
  #runs: Promise<void> = Promise.resolve();

  /** @internal Use `engine.session(id)`. */
  constructor(id: string, settings: EngineSettings) {
    this.id = id;
    this.#settings = settings;
    this.#loader = new SessionLoader(id, settings);
  }

  #ready(): Promise<LoadedSession> {
    return this.#loader.ready();
  }

  /**
   * Opens a turn, with the user's message when given (see `SessionTurn`). Messages added since the last commit
   * that hold a reply (an exchange not committed yet) are committed first; other uncommitted messages (user
   * messages, tool results) belong to the turn.
   *
   * @example
   * await using turn = await session.begin("Summarise the incident.");
   * const { response } = await turn.send((request, signal) => callModel(request, signal));
   * await turn.commit(response);
   */
  async begin(input?: string | readonly ContentBlock[]): Promise<SessionTurn> {
    const { conversation } = await this.#ready();
    if (holdsUncommittedReply(conversation)) await this.commit();
    const turn = new SessionTurn(this);
    if (input !== undefined) await turn.addUser(input);
    return turn;
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
    if (options.keepOpenTurn !== true && holdsUncommittedReply(conversation)) await this.commit();
    return conversation.appendUser(content, options.metadata);
  }

  /**
   * Adds a system message to the open turn, stored with it (a framework's system items kept in its history).
   * Requests do not replay it where it stands: `prepare` sends the system prompt it is given.
   */
  async addSystem(
    content: readonly ContentBlock[],
    options: Pick<AddUserOptions, "metadata"> = {},
  ): Promise<Message> {
    const { conversation } = await this.#ready();
    const metadata = options.metadata;
    return conversation.append({ role: "system", content, ...(metadata !== undefined && { metadata }) });
  }

  /**
   * Governs and assembles the next request: fresh system prompt (with core memories when memory is on),
   * governed history, current input last. Throws `ContextOverflowError` when it cannot fit.
   */
  async prepare(options: PrepareRequestOptions = {}): Promise<PreparedRequest> {
    const { conversation, governor } = await this.#ready();
    const { prepared, fixedTokens } = await assembleRequest(
      this.id,
      this.#settings,
      governor,
      conversation,
      options,
    );
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
    const copy = previewGovernor(this.id, this.#settings, governor, conversation);
    return (await assembleRequest(this.id, this.#settings, copy, conversation, options)).prepared;
  }

  /** Records the assistant's reply (text, reasoning, tool calls) with its usage. */
  async recordAssistant(input: AssistantInput): Promise<Message> {
    const { conversation, governor } = await this.#ready();
    const message = await conversation.appendAssistant(input);
    governor.recordSuccess();
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
   * result per call, right after it). A refused batch records none of its results. `options.metadata` holds data
   * kept with each result's message (never sent to a model), by position.
   */
  async recordToolResults(
    results: readonly ToolResultInput[],
    options: { readonly metadata?: readonly Message["metadata"][] } = {},
  ): Promise<Message[]> {
    const { conversation } = await this.#ready();
    checkToolResults(conversation.snapshot(), results, this.id);
    const messages: Message[] = [];
    for (const [index, result] of results.entries())
      messages.push(await conversation.appendToolResult(result, options.metadata?.[index]));
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
    if (index < history.length - conversation.uncommitted().length) {
      await this.#settings.store.attachCompactSummary(this.id, { messageId: updated.id, callId, summary });
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
    const state = await this.#ready();
    const { conversation } = state;
    const fresh = conversation.uncommitted();
    const inputs: MessageInput[] = fresh.map(
      ({ id, sessionId: _sessionId, seq: _seq, turn: _turn, ...rest }) => ({ id, ...rest }),
    );
    const compactions = unstoredCompactions(state, conversation.storedNextSeq + fresh.length);
    const stored =
      inputs.length > 0 || compactions.length > 0
        ? await writeTurn(this.#settings, this.#loader.codec, state, inputs, compactions)
        : undefined;
    conversation.commitTurn(stored?.nextSeq);
    // The turn's request is over: the next `beginRequest` then has nothing to abort (aborting a finished request's
    // signal cost an error's stack and its listeners on every turn).
    conversation.endRequest();
    return stored;
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
    if (!isContextOverflowError(error)) return undefined;
    const { governor } = await this.#ready();
    return (await governor.recover(error, signal)).event;
  }

  /**
   * Aborts the in-flight request and removes every message added since the last commit (the open turn, with the
   * user messages and tool results added before it); nothing of them was stored. Resolves with them, in order.
   */
  async interrupt(): Promise<Message[]> {
    const { conversation } = await this.#ready();
    const uncommitted = conversation.uncommitted();
    const removed = await conversation.interrupt();
    // The history now ends before what the governor last saw, so it would rebuild its view from the in-memory
    // originals and compact them again. The store holds the committed history with its summaries in place:
    // reload from it, so the next request keeps the summaries (and the prompt-cache prefix) it had. The reload
    // also drops the uncommitted messages before the open turn, which `conversation.interrupt` keeps.
    if (removed.length > 0 || uncommitted.length > 0) this.#loader.forget();
    return uncommitted.length > removed.length ? [...uncommitted] : removed;
  }

  /** The signal to pass to the model call; `interrupt()` aborts it. */
  async beginRequest(): Promise<AbortSignal> {
    return (await this.#ready()).conversation.beginRequest();
  }

  /** User-initiated compaction (`/compact [focus]`), persisted once the range it covers is committed. */
  async compact(options: { focus?: string } = {}): Promise<GovernanceEvent[]> {
    const state = await this.#ready();
    const events = await state.governor.compact({
      ...options,
      fixedTokens: this.#lastFixedTokens,
      summarizer: this.#settings.compactSummarizer,
    });
    const compactions = unstoredCompactions(state, state.conversation.storedNextSeq);
    if (compactions.length > 0) await writeTurn(this.#settings, this.#loader.codec, state, [], compactions);
    return events;
  }

  /**
   * Clears the context: everything so far is replaced by one marker summary, so the model starts fresh while the
   * store keeps every original row (hidden, not deleted).
   */
  async clear(): Promise<void> {
    const state = await this.#ready();
    if (state.conversation.hasOpenTurn || state.conversation.uncommitted().length > 0) await this.commit();
    await clearContext(this.id, this.#settings, state);
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
      stored: await this.#settings.store.getSession(this.id),
      contextWindow: governor.window.contextWindow,
      usable: governor.window.usable,
    };
  }

  /**
   * The tools the engine answers itself: `recall_tool_output` when governance may move tool outputs or arguments
   * out of the view (its notices tell the model to call it), and `search_memory` when the engine has long-term
   * memory. `run()` offers and runs them; other loops offer them with their own tools and answer their calls.
   */
  get engineTools(): readonly EngineTool[] {
    return (this.#engineTools ??= sessionEngineTools(this.#settings, this.id));
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
   * with `engine.release(id)` (`if (await session.isBehindStore()) engine.release(session.id)`), and the next
   * `engine.session(id)` reloads it as stored.
   */
  isBehindStore(): Promise<boolean> {
    return this.#loader.isBehindStore();
  }

  /** @internal The loaded session's governor: `ctxkitMiddleware` and `ctxkitPrepareStep` expose it as theirs. */
  async governor(): Promise<Governor> {
    return (await this.#ready()).governor;
  }
  /** How many messages `history()` holds, without copying them. */
  async historyLength(): Promise<number> {
    return (await this.#ready()).conversation.length;
  }
}
