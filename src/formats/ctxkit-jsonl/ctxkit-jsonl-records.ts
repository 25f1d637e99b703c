import type { JsonValue, Message } from "../../model/message.ts";

/**
 * Version of the ctxkit JSONL layout, written in the header line. Readers refuse newer versions.
 *
 * @example
 * formatCtxkitRecord({ type: "ctxkit", version: CTXKIT_JSONL_VERSION }); // '{"type":"ctxkit","version":1}'
 */
export const CTXKIT_JSONL_VERSION = 1;

/**
 * Every line type of ctxkit JSONL. `session` and `blob` are reserved for the session store's exports: this
 * module reads and writes them as opaque JSON objects, so a store can extend them without changing the reader.
 *
 * @example
 * CTXKIT_JSONL_RECORD_TYPES.includes(record.type);
 */
export const CTXKIT_JSONL_RECORD_TYPES = ["ctxkit", "conversation", "message", "session", "blob"] as const;

/**
 * Line types passed through to the caller untouched.
 *
 * @example
 * if (record.type === "session" || record.type === "blob") store.restore(record);
 */
export const PASS_THROUGH_RECORD_TYPES = ["session", "blob"] as const;

/** The first line: `{"type":"ctxkit","version":1, …}`. Extra header fields are kept as written. */
export interface CtxkitHeaderRecord {
  readonly type: "ctxkit";
  readonly version: number;
  readonly [key: string]: JsonValue;
}

/** Where a conversation came from: written before its messages. */
export interface CtxkitConversationRecord {
  readonly type: "conversation";
  readonly id: string;
  /** The transcript format it was first imported from (`ctxkit` when it was created by ctxkit). */
  readonly format: string;
  readonly source: string;
  readonly title?: string;
  readonly sidechain?: boolean;
  readonly metadata?: { readonly [key: string]: JsonValue };
}

/** One message. On disk the message's fields sit beside `type` (`{"type":"message","id":…}`). */
export interface CtxkitMessageRecord {
  readonly type: "message";
  readonly message: Message;
}

/** A `session` or `blob` line, as written. */
export interface CtxkitPassThroughRecord {
  readonly type: (typeof PASS_THROUGH_RECORD_TYPES)[number];
  readonly [key: string]: JsonValue;
}

/** Any ctxkit JSONL line. */
export type CtxkitRecord =
  CtxkitHeaderRecord | CtxkitConversationRecord | CtxkitMessageRecord | CtxkitPassThroughRecord;

/** A record read from a file, with its 1-based line number. */
export interface CtxkitJsonlLine {
  readonly line: number;
  readonly record: CtxkitRecord;
}
