import { CtxkitError, type CtxkitErrorOptions } from "./ctxkit-error.ts";

/** Input that failed validation at a public boundary. `issues` lists each problem with its path. */
export class ValidationError extends CtxkitError {
  readonly issues: readonly { path: string; message: string }[];
  constructor(
    message: string,
    issues: readonly { path: string; message: string }[] = [],
    options?: CtxkitErrorOptions,
  ) {
    super("invalid_input", message, options);
    this.issues = issues;
  }
}

/** A file or payload that could not be parsed. Names the source, the line (1-based) and what was expected. */
export class ParseError extends CtxkitError {
  readonly source: string;
  readonly line: number | undefined;
  readonly expected: string;
  constructor(
    source: string,
    line: number | undefined,
    expected: string,
    detail: string,
    options?: CtxkitErrorOptions,
  ) {
    const where = line === undefined ? source : `${source}:${line}`;
    super("parse_error", `${where}: ${detail}; expected ${expected}`, options);
    this.source = source;
    this.line = line;
    this.expected = expected;
  }
}

/**
 * A JSONL transcript whose last line was cut off mid-record (no newline after it, not JSON), as when its agent
 * is still writing it. `line` is that line; everything before it is whole.
 */
export class PartialLastLineError extends ParseError {
  constructor(
    source: string,
    line: number,
    hint = "wait until the transcript is complete, or drop that line",
  ) {
    super(
      source,
      line,
      "complete JSON lines",
      `the last line is incomplete (the transcript may still be being written); ${hint}`,
    );
  }
}

/** A transcript whose format could not be recognised. */
export class UnknownFormatError extends CtxkitError {
  constructor(source: string, options?: CtxkitErrorOptions) {
    super(
      "unknown_format",
      `${source}: unrecognised transcript format; pass --format claude-code|codex|gemini-cli|openai|swe-agent|ctxkit`,
      options,
    );
  }
}

/** A session that is to be created or restored already exists; nothing was written. */
export class SessionExistsError extends ValidationError {
  readonly sessionId: string;
  constructor(sessionId: string, hint: string, options?: CtxkitErrorOptions) {
    super(`session ${sessionId} already exists; ${hint}`, [], options);
    this.sessionId = sessionId;
  }
}

/**
 * A session to restore or import has a media block (image, file, attachment) whose `ref` names a blob that
 * neither the import carries nor the store holds, so the media would be lost; nothing was written.
 *
 * @example
 * new MissingBlobError("s1", 4, "blob:9f86…"); // session s1, message seq 4
 */
export class MissingBlobError extends ValidationError {
  /** The session whose message refers to the blob. */
  readonly sessionId: string;
  /** Seq of the message whose media refers to the blob. */
  readonly seq: number;
  /** The missing blob's reference (`blob:<sha256>`, or whatever the message names). */
  readonly ref: string;
  constructor(sessionId: string, seq: number, ref: string, options?: CtxkitErrorOptions) {
    super(
      `message ${seq} of session ${sessionId} refers to media ${ref}, which the import does not carry and ` +
        "the store does not hold; nothing was written. Export the session again from the store that holds its " +
        "media (`ctxkit sessions export` writes each blob as a blob line) and import that file",
      [{ path: `sessions.${sessionId}.messages.${seq}`, message: `missing blob ${ref}` }],
      options,
    );
    this.sessionId = sessionId;
    this.seq = seq;
    this.ref = ref;
  }
}

/** Something that was asked for by id does not exist (or belongs to someone else). */
export class NotFoundError extends CtxkitError {
  readonly kind: string;
  readonly id: string;
  constructor(kind: string, id: string, hint = "", options?: CtxkitErrorOptions) {
    super("not_found", `${kind} "${id}" not found${hint ? `; ${hint}` : ""}`, options);
    this.kind = kind;
    this.id = id;
  }
}

/** The numbers behind a context overflow. */
export interface OverflowFigures {
  /** Tokens the request would need, reserved output included. */
  requiredTokens: number;
  /** The model's context window. */
  windowTokens: number;
  /** Tokens reserved for the model's output. */
  reservedOutputTokens: number;
}

/** A request that would not fit the model's context window, even after governance. It was not sent. */
export class ContextOverflowError extends CtxkitError {
  readonly figures: OverflowFigures;
  constructor(figures: OverflowFigures, detail = "", options?: CtxkitErrorOptions) {
    super(
      "context_overflow",
      `request needs ${figures.requiredTokens} tokens (including ${figures.reservedOutputTokens} reserved for output) ` +
        `but the window is ${figures.windowTokens}${detail ? `; ${detail}` : ""}; ` +
        "shorten the current input or tool outputs, raise the window, or clear the session",
      options,
    );
    this.figures = figures;
  }
}

/** Two writers raced on one session; the later append was refused and nothing was written. */
export class ConcurrentWriteError extends CtxkitError {
  readonly sessionId: string;
  constructor(sessionId: string, detail: string, options?: CtxkitErrorOptions) {
    super(
      "concurrent_write",
      `session ${sessionId}: ${detail}; reload the session and retry the write`,
      options,
    );
    this.sessionId = sessionId;
  }
}

/** A storage failure (I/O, constraint, driver). `retryable` tells whether trying again may help. */
export class StoreError extends CtxkitError {
  readonly retryable: boolean;
  constructor(message: string, retryable = false, options?: CtxkitErrorOptions) {
    super("store_error", message, options);
    this.retryable = retryable;
  }
}

/** The database was written by a newer ctxkit than this one. */
export class SchemaTooNewError extends CtxkitError {
  constructor(found: number, supported: number, location: string) {
    super(
      "schema_too_new",
      `${location} has schema version ${found} but this ctxkit supports up to ${supported}; upgrade ctxkit to open it`,
    );
  }
}

/** A store file that is damaged or not a ctxkit database at all. */
export class CorruptStoreError extends CtxkitError {
  constructor(location: string, detail: string, options?: CtxkitErrorOptions) {
    super(
      "corrupt_store",
      `${location}: ${detail}; restore it from a backup or point ctxkit at another database`,
      options,
    );
  }
}

/**
 * A stored message whose row cannot be read back: its JSON was damaged on disk. Names the session and the
 * message's seq, so the rest can still be exported and the session deleted or restored.
 */
export class DamagedMessageError extends CorruptStoreError {
  readonly sessionId: string;
  readonly seq: number;
  constructor(location: string, sessionId: string, seq: number, options?: CtxkitErrorOptions) {
    const damage = `message seq ${seq} of session "${sessionId}" is damaged (its stored JSON cannot be read)`;
    super(location, damage, options);
    this.message =
      `${location}: ${damage}; export the other sessions, then delete this one ` +
      `(ctxkit sessions delete ${sessionId}) or restore it from a backup`;
    this.sessionId = sessionId;
    this.seq = seq;
  }
}

/** The agent repeats itself: the same tool call, a short cycle of calls, or repeated streamed content. */
export class LoopDetectedError extends CtxkitError {
  readonly pattern: string;
  constructor(pattern: string, options?: CtxkitErrorOptions) {
    super("loop_detected", `loop detected: ${pattern}; stop the run or change the instruction`, options);
    this.pattern = pattern;
  }
}

/** A summarizer call failed (the caller may fall back to another summarizer). */
export class SummarizerError extends CtxkitError {
  constructor(message: string, options?: CtxkitErrorOptions) {
    super("summarizer_failed", message, options);
  }
}

/** The in-flight turn was interrupted by the caller. */
export class InterruptedError extends CtxkitError {
  constructor(message = "the turn was interrupted; its messages were removed") {
    super("interrupted", message);
  }
}

/** A setting that is missing or has a wrong value. Names the key, where it came from and what is allowed. */
export class ConfigError extends CtxkitError {
  readonly key: string;
  constructor(key: string, detail: string, options?: CtxkitErrorOptions) {
    super("config_error", `setting "${key}": ${detail}`, options);
    this.key = key;
  }
}

/** A feature that this backend or format cannot do. */
export class UnsupportedError extends CtxkitError {
  constructor(message: string) {
    super("unsupported", message);
  }
}

/** An optional peer dependency that a feature needs is not installed. Names the package and how to add it. */
export class MissingDependencyError extends CtxkitError {
  readonly packageName: string;
  constructor(packageName: string, feature: string, options?: CtxkitErrorOptions) {
    super(
      "missing_dependency",
      `${feature} needs the package "${packageName}", which is not installed; run: npm install ${packageName}`,
      options,
    );
    this.packageName = packageName;
  }
}

/**
 * A removal refused because the message is a summary or was replaced by one (`removeLastMessage`): taking it away
 * would leave a summary standing for a message that is gone, or a compaction without its summary.
 */
export class CompactedMessageError extends UnsupportedError {
  /** The session whose newest message was to be removed. */
  readonly sessionId: string;
  /** The seq of that message. */
  readonly seq: number;
  constructor(sessionId: string, seq: number) {
    super(
      `the newest message of session ${sessionId} (seq ${seq}) is a summary or lies inside a compaction; ` +
        "only a message appended after the last compaction can be removed",
    );
    this.sessionId = sessionId;
    this.seq = seq;
  }
}
