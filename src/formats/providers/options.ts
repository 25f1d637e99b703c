import type { Clock, IdGenerator } from "../../model/ids.ts";

/** Options shared by every `toX` converter. */
export interface ExportOptions {
  /**
   * Wrap the text of summary messages in `<conversation-summary>` tags so the model knows what it is reading and
   * `fromX` can recognise it again. Default `true`; with `false` a summary is sent as plain user text and comes
   * back as a plain user message.
   */
  readonly summaryEnvelope?: boolean;
  /**
   * What to do with an image or file kept in the blob store (`ref`) that the caller did not resolve: `error`
   * (default) throws an `UnsupportedError`, `placeholder` sends a short text naming the reference instead.
   */
  readonly references?: "error" | "placeholder";
}

/** Options shared by every `fromX` converter: how to fill the fields a provider payload does not carry. */
export interface ImportOptions {
  /** Session id stamped on every message. Default: a fresh id from `ids`. */
  readonly sessionId?: string;
  /** Id generator for message ids (prefix `msg`) and the default session id. Default: random ids. */
  readonly ids?: IdGenerator;
  /** Clock for `createdAt`. Called once per import. Default: the wall clock. */
  readonly clock?: Clock;
  /** `seq` of the first imported message; the rest follow one by one. Default 0. */
  readonly startSeq?: number;
  /** The turn in progress before the first imported message (0 = none). Default 0. */
  readonly startTurn?: number;
}
