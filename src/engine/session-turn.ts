import type { AssistantInput, ToolResultInput } from "../conversation/conversation.ts";
import type { GovernanceEvent } from "../governance/events.ts";
import { toolCallsOf } from "../model/blocks.ts";
import type { ContentBlock, Message } from "../model/message.ts";
import type { SessionRecord } from "../store/session-store.ts";
import type { EngineSession, OverflowRecovery, PrepareRequestOptions } from "./engine-session.ts";
import { runEngineTool } from "./engine-tool.ts";
import type { PreparedRequest } from "./prepared-request.ts";

/** Sends a prepared request to the model (any wire format) and resolves with what came back. */
export type Transport<T> = (request: PreparedRequest, signal: AbortSignal) => Promise<T>;

/** Options of `SessionTurn.send`: the request's, and how to read the model's reply to answer the engine's tools. */
export interface SendOptions<T> extends PrepareRequestOptions {
  /**
   * Reads the model's reply in a response. Given it, the session's own tools (`session.engineTools`:
   * `recall_tool_output` when governance offloads, `search_memory` with memory) are offered with the request's
   * tools, and a reply that calls only them is answered by the session — the call and its results recorded in the
   * turn — and the request sent again, so the caller gets the reply that follows. Undefined when the reply cannot
   * be read yet (a stream already being passed on): the response is handed over as it is.
   */
  readonly reply?: (response: T) => AssistantInput | undefined;
}

/** How many times in a row one `send` answers the engine's tools before it hands the reply over as it is. */
const ENGINE_ROUNDS = 8;

/** What `SessionTurn.send` got back. */
export interface TurnResponse<T> {
  /** What the transport resolved with, for the request it answered. */
  readonly response: T;
  /** The request that was answered (prepared again after an overflow recovery). */
  readonly request: PreparedRequest;
  /** The governance events of every request prepared by this send, the recoveries' events included, in order. */
  readonly events: readonly GovernanceEvent[];
  /** The overflow recoveries this send made (none, `trimmed`, then `cleared`). */
  readonly recoveries: readonly OverflowRecovery[];
}

/** What `SessionTurn.commit` stored. */
export interface CommittedTurn {
  /** The reply recorded by the commit, when it was given one. */
  readonly reply: Message | undefined;
  /** The session's record as the commit stored it (undefined when there was nothing to write). */
  readonly session: SessionRecord | undefined;
}

/**
 * One open turn of a session: the inputs added to it, each request sent (prepared, sent, and after a provider
 * overflow recovered and sent again), the replies and tool results recorded, then one commit that stores it all
 * in one transaction. A turn disposed of without a commit is an interrupt: nothing of it is stored and the
 * session is as it was before the turn (`await using turn = await session.begin(input)`). Every entry point —
 * `run()`, the proxy, the framework adapters, CLI chat — drives its model calls through one of these.
 *
 * @example
 * ```ts
 * await using turn = await session.begin("Why did the deploy fail?");
 * const { response } = await turn.send((request, signal) => callModel(request.toOpenAIChat(), signal));
 * await turn.commit({ content: response.text, provider: "openai" });
 * ```
 */
export class SessionTurn {
  readonly session: EngineSession;
  #settled = false;

  /** @internal Use `session.begin()`. */
  constructor(session: EngineSession) {
    this.session = session;
  }

  /** True once the turn was committed or disposed of. */
  get settled(): boolean {
    return this.#settled;
  }

  /** Adds a user message to the turn (committed with it, or not at all). */
  addUser(content: string | readonly ContentBlock[]): Promise<Message> {
    return this.session.addUser(content, { keepOpenTurn: true });
  }

  /** Records a reply or tool results in the turn (see `EngineSession.record`). */
  record(input: AssistantInput | readonly ToolResultInput[]): Promise<Message[]> {
    return this.session.record(input);
  }

  /**
   * Prepares the governed request and sends it with `transport`. When the model refuses it as too long for its
   * window (see `isContextOverflowError`), the session recovers (`trimmed`, then `cleared`) and the request is
   * prepared and sent again. The transport gets a signal that `session.interrupt()` (or `options.signal`) aborts.
   */
  async send<T>(transport: Transport<T>, options: SendOptions<T> = {}): Promise<TurnResponse<T>> {
    const { reply: read, ...prepare } = options;
    const own = await this.session.beginRequest();
    const signal = prepare.signal === undefined ? own : AbortSignal.any([own, prepare.signal]);
    const callerTools = prepare.tools ?? [];
    const engineTools =
      read === undefined
        ? []
        : this.session.engineTools.filter(
            (tool) => !callerTools.some((t) => t.name === tool.definition.name),
          );
    const prepareOptions = {
      ...prepare,
      signal,
      ...(engineTools.length > 0 && {
        tools: [...callerTools, ...engineTools.map((tool) => tool.definition)],
      }),
    };
    const events: GovernanceEvent[] = [];
    const recoveries: OverflowRecovery[] = [];
    let rounds = 0;
    for (;;) {
      const request = await this.session.prepare(prepareOptions);
      events.push(...request.events);
      let response: T;
      try {
        response = await transport(request, signal);
      } catch (error) {
        const recovery = signal.aborted ? undefined : await this.session.recover(error, signal);
        if (recovery === undefined) throw error;
        events.push(recovery);
        recoveries.push(recovery);
        continue;
      }
      const reply = read?.(response);
      const calls = reply === undefined ? [] : toolCallsOf({ content: blocksOf(reply.content) });
      const own = calls.map((call) => engineTools.find((tool) => tool.definition.name === call.name));
      if (reply === undefined || calls.length === 0 || own.includes(undefined) || ++rounds > ENGINE_ROUNDS)
        return { response, request, events, recoveries };
      await this.record(reply);
      const results = [];
      for (const [index, call] of calls.entries()) {
        const output = await runEngineTool(own[index]!, call, signal);
        results.push({ callId: call.id, toolName: call.name, ...output });
      }
      await this.record(results);
    }
  }

  /**
   * Records `reply` (when given) and commits the turn in one transaction. A commit that fails leaves the turn open:
   * dispose of it to take it back.
   */
  async commit(reply?: AssistantInput): Promise<CommittedTurn> {
    const message = reply === undefined ? undefined : await this.session.recordAssistant(reply);
    const stored = await this.session.commit();
    this.#settled = true;
    return { reply: message, session: stored };
  }

  /**
   * Ends the turn: when it was not committed, interrupts it (aborts the request in flight and removes what it
   * added; the session reloads what the store holds). Resolves with the removed messages.
   */
  async dispose(): Promise<Message[]> {
    if (this.#settled) return [];
    this.#settled = true;
    return this.session.interrupt();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }
}

function blocksOf(content: string | readonly ContentBlock[]): readonly ContentBlock[] {
  return typeof content === "string" ? [{ type: "text", text: content }] : content;
}
