import { InterruptedError, NotFoundError } from "../errors/errors.ts";
import type { ContentBlock, Message, MessageInput, Role, ToolResultBlock, Usage } from "../model/message.ts";
import { randomIds, systemClock, type Clock, type IdGenerator } from "../model/ids.ts";
import { contentInputSchema, toolResultBlockSchema, usageSchema, validate } from "../model/schemas.ts";
import { opensTurn, type Turn } from "../model/turns.ts";
import { ConversationSnapshot } from "./snapshot.ts";
import { WriteQueue } from "./write-queue.ts";

/** Options of `new Conversation()`. */
export interface ConversationOptions {
  /** Session id stamped on every message. Default: a random id. */
  sessionId?: string;
  /** History to start from (e.g. loaded from a store), in order. */
  messages?: readonly Message[];
  /** Sequence number of the next appended message (a store's `nextSeq`); default: after the highest seq. */
  nextSeq?: number;
  ids?: IdGenerator;
  clock?: Clock;
}

/** An assistant reply to append. */
export interface AssistantInput {
  content: string | readonly ContentBlock[];
  model?: string;
  provider?: string;
  usage?: Usage;
  finishReason?: string;
  error?: string;
  /** Data kept with the reply and never sent to a model (see `Message.metadata`). */
  metadata?: Message["metadata"];
}

/** A tool result to append (one per tool message). */
export type ToolResultInput = Omit<ToolResultBlock, "type">;

/**
 * Synchronous write access to a conversation, handed out by `Conversation.exclusive()` so that a whole turn
 * can be written without other writers interleaving.
 */
export interface ConversationWriter {
  append(input: MessageInput & { role: Role }): Message;
}

/**
 * An in-memory conversation: append-only history with O(1) immutable snapshots, serialised writes,
 * turn grouping and interrupts.
 *
 * @example
 * ```ts
 * const conversation = new Conversation();
 * await conversation.appendUser("List the files");
 * await conversation.appendAssistant({ content: [{ type: "tool-call", id: "c1", name: "ls", input: {} }] });
 * await conversation.appendToolResult({ callId: "c1", toolName: "ls", content: "a.ts b.ts" });
 * conversation.snapshot().turns().length; // 1
 * ```
 */
export class Conversation {
  readonly sessionId: string;
  readonly #ids: IdGenerator;
  readonly #clock: Clock;
  readonly #queue = new WriteQueue();
  /** Append-only while any snapshot may share it; rewrites replace it with a fresh array. */
  #backing: Message[];
  #version = 0;
  #nextSeq: number;
  #turn: number;
  /** Index where the open (uncommitted) turn starts, or -1. */
  #openTurnStart = -1;
  /** How many messages, from the start, are committed (stored); those after them are not yet. */
  #committed: number;
  /** The store's `nextSeq` as of its last write: what the next write expects. */
  #storedNextSeq: number;
  #inFlight: AbortController | undefined;
  readonly #writer: ConversationWriter = { append: (input) => this.#append(input) };

  constructor(options: ConversationOptions = {}) {
    this.#ids = options.ids ?? randomIds;
    this.#clock = options.clock ?? systemClock;
    this.sessionId = options.sessionId ?? this.#ids("ses");
    this.#backing = (options.messages ?? []).map(freezeMessage);
    // A loaded view may hold a summary whose seq is newer than the messages after it: use the highest seq.
    this.#nextSeq = this.#backing.reduce(
      (next, message) => Math.max(next, message.seq + 1),
      options.nextSeq ?? 0,
    );
    this.#turn = this.#backing.reduce((turn, message) => Math.max(turn, message.turn), 0);
    this.#committed = this.#backing.length;
    this.#storedNextSeq = options.nextSeq ?? this.#nextSeq;
  }

  /** Number of messages. */
  get length(): number {
    return this.#backing.length;
  }

  /** A consistent read-only view of the history now. O(1). */
  snapshot(): ConversationSnapshot {
    return new ConversationSnapshot(this.#backing, this.#backing.length, this.#version);
  }

  /** The history grouped into turns. */
  turns(): Turn[] {
    return this.snapshot().turns();
  }

  /** Appends a user message, opening a new turn (with `metadata`: data kept with it, never sent to a model). */
  appendUser(content: string | readonly ContentBlock[], metadata?: Message["metadata"]): Promise<Message> {
    const blocks = toBlocks(validate(contentInputSchema, content, "user content"));
    return this.#queue.run(() =>
      this.#append({ role: "user", content: blocks, ...(metadata !== undefined && { metadata }) }),
    );
  }

  /** Appends an assistant reply (text, reasoning and tool calls) with its usage. */
  appendAssistant(input: AssistantInput): Promise<Message> {
    const blocks = toBlocks(validate(contentInputSchema, input.content, "assistant content"));
    const usage = input.usage === undefined ? undefined : validate(usageSchema, input.usage, "usage");
    return this.#queue.run(() =>
      this.#append({
        role: "assistant",
        content: blocks,
        ...(input.model !== undefined && { model: input.model }),
        ...(input.provider !== undefined && { provider: input.provider }),
        ...(usage !== undefined && { usage }),
        ...(input.finishReason !== undefined && { finishReason: input.finishReason }),
        ...(input.error !== undefined && { error: input.error }),
        ...(input.metadata !== undefined && { metadata: input.metadata }),
        completedAt: this.#clock().toISOString(),
      }),
    );
  }

  /** Appends one tool result as a `tool` message (with `metadata`: data kept with it, never sent to a model). */
  appendToolResult(input: ToolResultInput, metadata?: Message["metadata"]): Promise<Message> {
    const block = validate(toolResultBlockSchema, { type: "tool-result", ...input }, "tool result");
    return this.#queue.run(() =>
      this.#append({
        role: "tool",
        content: [block as ToolResultBlock],
        ...(metadata !== undefined && { metadata }),
      }),
    );
  }

  /** Appends any message (an importer's, a summary, a marker). */
  append(input: MessageInput & { role: Role }): Promise<Message> {
    return this.#queue.run(() => this.#append(input));
  }

  /**
   * Runs `task` with exclusive write access: no other write starts until it settles. Use it to write a whole
   * turn atomically with respect to other writers.
   */
  exclusive<T>(task: (writer: ConversationWriter) => T | Promise<T>): Promise<T> {
    return this.#queue.run(() => task(this.#writer));
  }

  /**
   * Marks a model request as in flight and returns the signal to pass to the provider; `interrupt()` aborts it.
   */
  beginRequest(): AbortSignal {
    this.#inFlight?.abort(new InterruptedError("superseded by a newer request"));
    this.#inFlight = new AbortController();
    return this.#inFlight.signal;
  }

  /** Marks the in-flight request as finished. */
  endRequest(): void {
    this.#inFlight = undefined;
  }

  /**
   * Closes the open turn: `interrupt()` no longer removes it, and every message so far counts as committed. Given
   * the store's `nextSeq` after the write that stored them, remembers it (see `storedNextSeq`).
   */
  commitTurn(storedNextSeq?: number): void {
    this.#openTurnStart = -1;
    this.#committed = this.#backing.length;
    if (storedNextSeq !== undefined) this.stored(storedNextSeq);
  }

  /** Remembers a store write that took seqs up to `nextSeq` (a compaction's summary rows, a turn's messages). */
  stored(nextSeq: number): void {
    this.#storedNextSeq = nextSeq;
    this.reserveSeq(nextSeq);
  }

  /** The store's `nextSeq` as of the last write this conversation was told of: the next write expects it. */
  get storedNextSeq(): number {
    return this.#storedNextSeq;
  }

  /** The messages appended since the last `commitTurn` (or since the conversation was loaded), in order. */
  uncommitted(): readonly Message[] {
    return this.#backing.slice(this.#committed);
  }

  /** True when a turn was opened and not yet committed. */
  get hasOpenTurn(): boolean {
    return this.#openTurnStart >= 0;
  }

  /**
   * Aborts the in-flight request and removes every message of the open turn, its user message included, so no
   * partial reply or dangling tool call remains. Resolves with the removed messages.
   */
  interrupt(): Promise<Message[]> {
    this.#inFlight?.abort(new InterruptedError());
    this.#inFlight = undefined;
    return this.#queue.run(() => {
      if (this.#openTurnStart < 0) return [];
      const removed = this.#backing.slice(this.#openTurnStart);
      this.#rewrite(this.#backing.slice(0, this.#openTurnStart));
      this.#turn = this.#backing.reduce((turn, message) => Math.max(turn, message.turn), 0);
      this.#openTurnStart = -1;
      return removed;
    });
  }

  /** Removes every message. Sequence numbers keep increasing so stored rows never collide. */
  clear(): Promise<void> {
    return this.#queue.run(() => {
      this.#rewrite([]);
      this.#openTurnStart = -1;
    });
  }

  /** Makes the next appended message's seq at least `nextSeq` (a store used seqs for rows of its own). */
  reserveSeq(nextSeq: number): void {
    this.#nextSeq = Math.max(this.#nextSeq, nextSeq);
  }

  /**
   * Puts `message` in place of the message with its id (e.g. a tool result that got its `compactSummary`). The
   * turn structure stays; snapshots taken before keep the old message (copy on write).
   */
  update(message: Message): Promise<void> {
    return this.#queue.run(() => {
      const index = this.#backing.findIndex((candidate) => candidate.id === message.id);
      if (index < 0) throw new NotFoundError("message", message.id, "it is not in this conversation");
      this.#rewrite(this.#backing.with(index, freezeMessage(message)));
    });
  }

  /** Replaces the whole history (e.g. after a compaction loaded from the store). */
  replace(messages: readonly Message[]): Promise<void> {
    return this.#queue.run(() => {
      this.#rewrite(messages.map(freezeMessage));
      const last = this.#backing.at(-1);
      if (last && last.seq >= this.#nextSeq) this.#nextSeq = last.seq + 1;
      this.#turn = Math.max(this.#turn, ...this.#backing.map((message) => message.turn));
      this.#openTurnStart = -1;
    });
  }

  #rewrite(messages: Message[]): void {
    this.#backing = messages;
    this.#committed = Math.min(this.#committed, messages.length);
    this.#version++;
  }

  #append(input: MessageInput & { role: Role }): Message {
    if (opensTurn(input)) {
      this.#turn++;
      this.#openTurnStart = this.#backing.length;
    }
    const message = freezeMessage({
      ...input,
      id: input.id ?? this.#ids("msg"),
      sessionId: this.sessionId,
      seq: this.#nextSeq++,
      turn: this.#turn,
      createdAt: input.createdAt ?? this.#clock().toISOString(),
    });
    this.#backing.push(message);
    this.#version++;
    return message;
  }
}

function toBlocks(content: string | readonly ContentBlock[]): ContentBlock[] {
  return typeof content === "string" ? [{ type: "text", text: content }] : [...content];
}

/** Freezes a message and its blocks (messages are shared by snapshots and must never change). */
export function freezeMessage<M extends Message>(message: M): M {
  if (Object.isFrozen(message)) return message;
  for (const block of message.content) deepFreeze(block);
  Object.freeze(message.content);
  if (message.usage) Object.freeze(message.usage);
  if (message.metadata) deepFreeze(message.metadata);
  return Object.freeze(message);
}

function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return;
  for (const entry of Object.values(value)) deepFreeze(entry);
  Object.freeze(value);
}
