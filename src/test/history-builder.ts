import type { ContentBlock, JsonValue, Message } from "../model/message.ts";

/** One tool call of a scripted step, with the output it produced. */
export interface ScriptedCall {
  name: string;
  input?: JsonValue;
  output: string | JsonValue;
  isError?: boolean;
}

/**
 * Builds realistic histories for tests: turns of user instructions, steps of tool calls with their results,
 * and replies — with deterministic ids, sequence and turn numbers.
 *
 * @example
 * const history = new HistoryBuilder()
 *   .user("Fix the failing test")
 *   .step([{ name: "bash", input: { command: "npm test" }, output: "1 failed" }])
 *   .reply("Fixed.")
 *   .build();
 */
export class HistoryBuilder {
  readonly #sessionId: string;
  readonly #messages: Message[] = [];
  #turn = 0;
  #calls = 0;

  constructor(options: { sessionId?: string } = {}) {
    this.#sessionId = options.sessionId ?? "session";
  }

  /** A user instruction, opening a new turn. */
  user(text: string): this {
    this.#turn++;
    return this.#push("user", [{ type: "text", text }]);
  }

  /** A system message. */
  system(text: string): this {
    return this.#push("system", [{ type: "text", text }]);
  }

  /** An assistant step: optional text, the tool calls, then one tool message per result. */
  step(calls: readonly ScriptedCall[], text?: string): this {
    const ids = calls.map(() => `call_${++this.#calls}`);
    const content: ContentBlock[] = text ? [{ type: "text", text }] : [];
    calls.forEach((call, index) =>
      content.push({ type: "tool-call", id: ids[index]!, name: call.name, input: call.input ?? {} }),
    );
    this.#push("assistant", content);
    calls.forEach((call, index) =>
      this.#push("tool", [
        {
          type: "tool-result",
          callId: ids[index]!,
          toolName: call.name,
          content: call.output,
          ...(call.isError && { isError: true }),
        },
      ]),
    );
    return this;
  }

  /** A final assistant reply (text only). */
  reply(text: string): this {
    return this.#push("assistant", [{ type: "text", text }]);
  }

  /** Appends a ready message (its seq, turn and session are set by the builder). */
  message(message: Pick<Message, "role" | "content"> & Partial<Message>): this {
    if (message.role === "user" && message.kind === undefined) this.#turn++;
    const { role, content, ...rest } = message;
    return this.#push(role, content, rest);
  }

  /** The messages so far (a copy). */
  build(): Message[] {
    return [...this.#messages];
  }

  #push(role: Message["role"], content: readonly ContentBlock[], extra: Partial<Message> = {}): this {
    const seq = this.#messages.length;
    this.#messages.push(
      Object.freeze({
        ...extra,
        id: `m${seq}`,
        sessionId: this.#sessionId,
        seq,
        turn: this.#turn,
        role,
        content,
        createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(),
      }),
    );
    return this;
  }
}
