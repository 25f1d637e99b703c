import type { Message, MessageInput, Role } from "../../model/message.ts";
import { opensTurn } from "../../model/turns.ts";

/**
 * Why a recorded tool call has no recorded result, by what the transcript holds next: the conversation was
 * compacted while the call ran, the user spoke, the model answered again, or the transcript ends (a checkpoint
 * taken mid-turn, a killed agent).
 */
export type UnansweredCallCause = "compaction" | "user-message" | "next-response" | "end-of-transcript";

const unansweredCallText: Record<UnansweredCallCause, string> = {
  compaction: "the conversation was compacted while the tool call ran",
  "user-message": "the user sent a new message before the tool call finished",
  "next-response": "the model was called again before the tool call finished",
  "end-of-transcript": "the transcript ends before the tool call finished",
};

/**
 * The text of the result an importer gives a tool call whose transcript records none.
 *
 * @example
 * unansweredCallResult("end-of-transcript"); // "[no result recorded: the transcript ends before …]"
 */
export function unansweredCallResult(cause: UnansweredCallCause): string {
  return `[no result recorded: ${unansweredCallText[cause]}]`;
}

/**
 * Time stamped on messages whose transcript records no time (tau-bench, SWE-agent).
 *
 * @example
 * const timed = messages.filter((message) => message.createdAt !== UNKNOWN_TIME);
 */
export const UNKNOWN_TIME = "1970-01-01T00:00:00.000Z";

/** What an importer supplies per message; the builder fills in id, session, seq and turn. */
export type MessageDraft = Omit<MessageInput, "id" | "createdAt"> & {
  readonly role: Role;
  readonly createdAt?: string | undefined;
};

/**
 * Numbers imported messages the way `Conversation` does: `seq` from 0, `turn` counted by user instructions,
 * ids `<conversation id>:<seq>` (deterministic, so importing a file twice gives equal messages).
 *
 * Every tool call gets exactly one result, the same way for every format: a call still unanswered when a user or
 * assistant message or a compaction marker arrives (or when the list is built) gets a result there, right after its
 * step, that says what happened (`unansweredCallResult`; `isError`, metadata `synthetic: true` and `unanswered: <cause>`).
 *
 * @example
 * const builder = new MessageListBuilder("session-1");
 * builder.add({ role: "user", content: [text("hi")] });
 * builder.build()[0]!.id; // "session-1:0"
 */
export class MessageListBuilder {
  readonly sessionId: string;
  readonly #messages: Message[] = [];
  #turn = 0;
  /** Tool calls of the steps since the last message that was not a tool result, by id, with their tool names. */
  readonly #openCalls = new Map<string, string>();

  constructor(sessionId: string) {
    this.sessionId = sessionId;
  }

  /** Number of messages added so far; also the `seq` the next message gets. */
  get length(): number {
    return this.#messages.length;
  }

  /** Appends a message and returns it. */
  add(draft: MessageDraft): Message {
    if (draft.role === "tool") {
      for (const block of draft.content)
        if (block.type === "tool-result") this.#openCalls.delete(block.callId);
    } else if (draft.kind === "marker") this.#answerOpenCalls("compaction", draft.createdAt);
    else if (draft.role === "user") this.#answerOpenCalls("user-message", draft.createdAt);
    else if (draft.role === "assistant") this.#answerOpenCalls("next-response", draft.createdAt);
    const message = this.#append(draft);
    if (draft.role === "assistant") {
      for (const block of draft.content)
        if (block.type === "tool-call") this.#openCalls.set(block.id, block.name);
    }
    return message;
  }

  #answerOpenCalls(cause: UnansweredCallCause, createdAt: string | undefined): void {
    if (this.#openCalls.size === 0) return;
    const open = [...this.#openCalls];
    this.#openCalls.clear();
    for (const [callId, toolName] of open) {
      this.#append({
        role: "tool",
        content: [
          { type: "tool-result", callId, toolName, content: unansweredCallResult(cause), isError: true },
        ],
        createdAt: createdAt ?? this.#messages.at(-1)?.createdAt,
        metadata: { synthetic: true, unanswered: cause },
      });
    }
  }

  #append(draft: MessageDraft): Message {
    if (opensTurn(draft)) this.#turn++;
    const seq = this.#messages.length;
    const { createdAt, ...rest } = draft;
    const message: Message = {
      id: `${this.sessionId}:${seq}`,
      sessionId: this.sessionId,
      seq,
      turn: this.#turn,
      ...rest,
      createdAt: createdAt ?? UNKNOWN_TIME,
    };
    this.#messages.push(message);
    return message;
  }

  /** Replaces a message added earlier (same seq) with `patch` applied; used to attach late usage figures. */
  update(message: Message, patch: Partial<Pick<Message, "usage" | "completedAt">>): void {
    this.#messages[message.seq] = { ...this.#messages[message.seq]!, ...patch };
  }

  /** The messages, in order; a tool call still unanswered gets its result now (`end-of-transcript`). */
  build(): Message[] {
    this.#answerOpenCalls("end-of-transcript", undefined);
    return [...this.#messages];
  }
}
