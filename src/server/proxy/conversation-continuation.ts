import { toolCallsOf, toolResultsOf } from "../../model/blocks.ts";
import type { Message } from "../../model/message.ts";
import { matchStored } from "./responses-session-inputs.ts";

/** How a request of a whole-conversation API (Anthropic Messages) relates to the stored session it names. */
export interface Continuation {
  /** True when the request continues the session: its `fresh` messages are stored, with the reply. */
  readonly continues: boolean;
  /** True when the request held the session's stored replies: its client resends its history. */
  readonly resent: boolean;
  /** The client's messages the session does not hold yet. */
  readonly fresh: Message[];
}

/**
 * Whether a request continues the stored session it names, or belongs to another conversation sharing its
 * session header (Claude Code sends its custom headers on every request: its subagents' and its side requests'
 * too). A Messages client sends its conversation from its first message, so a continuation holds the session's
 * replies up to its latest: the part they end is skipped and the rest is new. A request holding some of them but
 * not the latest branched off the session (a rewound or compacted history, a fork): another conversation. A
 * request holding none of them continues the session only as a client sending just its new messages would
 * (ctxkit's stateful mode allows that): when the session holds no reply yet; when the session's latest reply has
 * tool calls not answered yet, by answering one of them (the Messages API refuses a conversation whose tool calls
 * go unanswered); otherwise when it holds no reply of any conversation and this session's client is not known to
 * resend its history (`resends`). Anything else is another conversation (a subagent's, a side request): it must
 * not be stored in this session.
 *
 * @example
 * const { continues, fresh } = continuation(fromClient, await session.history(), resenders.has(id));
 */
export function continuation(
  client: readonly Message[],
  stored: readonly Message[],
  resends: boolean,
): Continuation {
  const { fresh, matched, replies } = matchStored(client, stored);
  const resent = matched > 0;
  if (resent || replies === 0) return { continues: matched === replies, resent, fresh };
  const last = stored.findLastIndex((message) => message.role === "assistant");
  const pending = new Set(toolCallsOf(stored[last]!).map((call) => call.id));
  for (const message of stored.slice(last + 1))
    for (const result of toolResultsOf(message)) pending.delete(result.callId);
  const continues =
    pending.size > 0
      ? client.some((message) => toolResultsOf(message).some((result) => pending.has(result.callId)))
      : !resends && !client.some((message) => message.role === "assistant");
  return { continues, resent, fresh };
}

/**
 * The sessions whose client resends its whole history, learnt from their requests that held a stored reply; a
 * bounded set (the least recently seen are forgotten first), kept in memory: after a restart it is learnt again
 * from the client's next continuation.
 *
 * @example
 * const resenders = new HistoryResenders();
 * if (match.resent) resenders.add(storeId);
 */
export class HistoryResenders {
  readonly #ids = new Map<string, true>();
  readonly #limit: number;

  /** @param limit How many sessions are remembered at most. */
  constructor(limit = 10_000) {
    this.#limit = limit;
  }

  /** True when the session's client was seen resending its history (and is still remembered). */
  has(id: string): boolean {
    return this.#ids.has(id);
  }

  /** Remembers that the session's client resends its history. */
  add(id: string): void {
    this.#ids.delete(id);
    this.#ids.set(id, true);
    if (this.#ids.size > this.#limit) this.#ids.delete(this.#ids.keys().next().value!);
  }
}
