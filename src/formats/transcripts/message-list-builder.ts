import type { Message, MessageInput, Role } from "../../model/message.ts";
import { opensTurn } from "../../model/turns.ts";

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
 * @example
 * const builder = new MessageListBuilder("session-1");
 * builder.add({ role: "user", content: [text("hi")] });
 * builder.build()[0]!.id; // "session-1:0"
 */
export class MessageListBuilder {
  readonly sessionId: string;
  readonly #messages: Message[] = [];
  #turn = 0;

  constructor(sessionId: string) {
    this.sessionId = sessionId;
  }

  /** Number of messages added so far; also the `seq` the next message gets. */
  get length(): number {
    return this.#messages.length;
  }

  /** Appends a message and returns it. */
  add(draft: MessageDraft): Message {
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

  /** The messages, in order. */
  build(): Message[] {
    return [...this.#messages];
  }
}
