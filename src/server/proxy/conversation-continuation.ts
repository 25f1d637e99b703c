import { messageText, toolCallsOf, toolResultsOf } from "../../model/blocks.ts";
import type { Message } from "../../model/message.ts";
import { matchStored } from "./responses-session-inputs.ts";

/**
 * How a session's client sends its conversation, as learnt from its requests: `resends` (it sent the session's
 * replies back: Claude Code, SDK apps) or `new-only` (it answered the session's tool calls without sending them
 * back: only its new messages, as ctxkit's stateful mode allows).
 */
export type ClientStyle = "resends" | "new-only";

/** How a request of a whole-conversation API (Anthropic Messages) relates to the stored session it names. */
export interface Continuation {
  /** True when the request continues the session: its `fresh` messages are stored, with the reply. */
  readonly continues: boolean;
  /** What this request showed of its client's style, when it showed something. */
  readonly style: ClientStyle | undefined;
  /** The client's messages the session does not hold yet. */
  readonly fresh: Message[];
  /**
   * True when the request resumes the session's paused reply: it ends with the session's latest reply, which
   * stopped with `pause_turn` (an Anthropic server tool paused a long turn), and holds nothing new. The session
   * goes upstream as it stands, its paused reply last, and the reply continues the same turn.
   */
  readonly resumes: boolean;
}

/** The stop reason of an Anthropic reply whose turn a server tool paused; the client sends it back to resume. */
const PAUSED_TURN = "pause_turn";

/**
 * Whether a request continues the stored session it names, or belongs to another conversation sharing its
 * session header (Claude Code sends its custom headers on every request: its subagents' and its side requests'
 * too). A Messages client sends its conversation from its first message, so a continuation holds the session's
 * replies up to its latest: the part they end is skipped and the rest is new. A request holding some of them but
 * not the latest branched off the session (a rewound or compacted history, a fork): another conversation. A
 * request holding none of them continues the session only as a client sending just its new messages would:
 * when the session holds no reply yet; when the session's latest reply has tool calls not answered yet, by
 * answering one of them (the Messages API refuses a conversation whose tool calls go unanswered) or, for a
 * client known to send only its new messages, by anything; otherwise when it holds no reply of any conversation
 * and this session's client is not known to resend its history. Anything else is another conversation (a
 * subagent's, a side request): it must not be stored in this session. A request that ends with the session's
 * latest reply and holds nothing new `resumes` it when that reply paused (`pause_turn`); after any other reply
 * it has nothing to answer (the route refuses it). A client that retried the latest turn after it was stored
 * holds its own reply to it from then on: what follows that reply continues the session (`afterRetriedTurn`).
 *
 * @example
 * const { continues, fresh, style } = continuation(fromClient, await session.history(), styles.get(id));
 */
export function continuation(
  client: readonly Message[],
  stored: readonly Message[],
  known: ClientStyle | undefined,
): Continuation {
  const { fresh, matched, replies } = matchStored(client, stored);
  if (matched > 0 && matched === replies - 1) {
    const after = afterRetriedTurn(fresh, stored);
    if (after !== undefined) return { continues: true, style: "resends", fresh: after, resumes: false };
  }
  if (matched > 0) {
    const latest = stored.at(-1);
    const resumes =
      matched === replies &&
      fresh.length === 0 &&
      latest?.role === "assistant" &&
      latest.finishReason === PAUSED_TURN;
    return { continues: matched === replies, style: "resends", fresh, resumes };
  }
  if (replies === 0) return { continues: true, style: undefined, fresh, resumes: false };
  const last = stored.findLastIndex((message) => message.role === "assistant");
  const pending = new Set(toolCallsOf(stored[last]!).map((call) => call.id));
  for (const message of stored.slice(last + 1))
    for (const result of toolResultsOf(message)) pending.delete(result.callId);
  if (pending.size > 0) {
    const answers = client.some((message) =>
      toolResultsOf(message).some((result) => pending.has(result.callId)),
    );
    return answers
      ? { continues: true, style: "new-only", fresh, resumes: false }
      : { continues: known === "new-only", style: undefined, fresh, resumes: false };
  }
  const continues = known !== "resends" && !client.some((message) => message.role === "assistant");
  return { continues, style: undefined, fresh, resumes: false };
}

/** True when two messages are the same input: role, text and the calls their tool results answer. */
function sameInput(sent: Message, stored: Message): boolean {
  const answers = (message: Message) =>
    toolResultsOf(message)
      .map((result) => result.callId)
      .join();
  return (
    sent.role === stored.role &&
    messageText(sent) === messageText(stored) &&
    answers(sent) === answers(stored)
  );
}

/**
 * A client that retried the session's latest turn after it was stored (its answer was lost on the way: a
 * timeout, a dropped connection) holds its own reply to it, not the stored one, and every later request of it
 * does too. When `fresh` (what follows the client's copy of the previous reply) repeats the latest turn's inputs,
 * then holds a reply and more, the client goes on from that turn: what follows its reply is new (the stored reply
 * stands for the client's). Undefined otherwise.
 */
function afterRetriedTurn(fresh: readonly Message[], stored: readonly Message[]): Message[] | undefined {
  const latest = stored.findLastIndex((message) => message.role === "assistant");
  const previous = stored.findLastIndex((message, index) => index < latest && message.role === "assistant");
  const inputs = stored.slice(previous + 1, latest);
  if (inputs.length === 0 || fresh.length <= inputs.length + 1) return undefined;
  if (!inputs.every((input, index) => sameInput(fresh[index]!, input))) return undefined;
  if (fresh[inputs.length]!.role !== "assistant") return undefined;
  return fresh.slice(inputs.length + 1);
}

/**
 * The styles of the sessions' clients, learnt from their requests; a bounded map (the least recently seen are
 * forgotten first), kept in memory: after a restart a style is learnt again from the client's next request
 * that shows it.
 *
 * @example
 * const styles = new ClientStyles();
 * if (match.style !== undefined) styles.set(storeId, match.style);
 */
export class ClientStyles {
  readonly #styles = new Map<string, ClientStyle>();
  readonly #limit: number;

  /** @param limit How many sessions are remembered at most. */
  constructor(limit = 10_000) {
    this.#limit = limit;
  }

  /** The style the session's client was last seen with, if it is still remembered. */
  get(id: string): ClientStyle | undefined {
    return this.#styles.get(id);
  }

  /** Remembers how the session's client sends its conversation. */
  set(id: string, style: ClientStyle): void {
    this.#styles.delete(id);
    this.#styles.set(id, style);
    if (this.#styles.size > this.#limit) this.#styles.delete(this.#styles.keys().next().value!);
  }
}
