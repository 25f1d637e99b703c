/** The messages between the SQLite store and its writer thread, and how errors cross the thread boundary. */
import * as errors from "../../errors/index.ts";
import { CtxkitError } from "../../errors/index.ts";
import type { PriceTable } from "../../pricing/model-prices.ts";

/** The store methods the writer thread runs (the per-turn writes). */
export type WriterMethod =
  | "appendTurn"
  | "applyCompaction"
  | "setSyncState"
  | "attachCompactSummary"
  | "renameSession"
  | "deleteSession"
  | "removeLastMessage"
  | "flushSearchIndex";

/** The blob writes the writer thread runs (offloaded outputs, the governor's rewritten messages). */
export type WriterBlobMethod = "putBlobText" | "putBlobBytes" | "deleteBlob";

/** What the writer thread opens: the database file and the store options that are plain data. */
export interface WriterOpenData {
  readonly path: string;
  readonly busyTimeoutMs?: number;
  readonly synchronous?: "full" | "normal";
  readonly pragmas?: { readonly [name: string]: string | number };
  readonly integrityCheck?: "first-write" | "off";
  readonly prices: PriceTable;
  readonly inlineMediaLimit: number;
}

/** One write: the method, its arguments (ids already assigned) and the caller's clock reading. */
export interface WriterRequest {
  readonly id: number;
  readonly method: WriterMethod | WriterBlobMethod | "close";
  readonly args: readonly unknown[];
  /** `clock()` of the caller, in ms since the epoch: the write's timestamps. */
  readonly now: number;
}

/** The answer to one request, sent after the group holding it committed (or failed); `group` numbers the group. */
export type WriterReply =
  | { readonly id: number; readonly group: number; readonly ok: true; readonly value: unknown }
  | { readonly id: number; readonly group: number; readonly ok: false; readonly error: SerializedError };

/** What the writer thread posts besides replies. */
export type WriterEvent =
  | { readonly type: "ready" }
  | { readonly type: "open-failed"; readonly error: SerializedError }
  | ({ readonly type: "reply" } & WriterReply);

/** An error as plain data. */
export interface SerializedError {
  readonly name: string;
  readonly message: string;
  readonly stack?: string;
  readonly ctxkit: boolean;
  readonly props: { readonly [key: string]: unknown };
}

/** An error as plain data that `deserializeError` turns back into an error of the same ctxkit class. */
export function serializeError(error: unknown): SerializedError {
  if (!(error instanceof Error)) {
    return { name: "Error", message: String(error), ctxkit: false, props: {} };
  }
  const props: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(error)) {
    if (key !== "cause" && isPlain(value)) props[key] = value;
  }
  return {
    name: error.name,
    message: error.message,
    stack: error.stack,
    ctxkit: CtxkitError.isInstance(error),
    props,
  };
}

const errorClasses = new Map<string, { prototype: Error }>(
  (Object.values(errors) as unknown[])
    .filter(
      (value): value is { name: string; prototype: Error } =>
        typeof value === "function" && value.prototype instanceof Error,
    )
    .map((value) => [value.name, value]),
);

/** The error a `serializeError` result stands for: same class (for ctxkit errors), code, message and fields. */
export function deserializeError(data: SerializedError): Error {
  const known = errorClasses.get(data.name);
  const prototype = (known ?? (data.ctxkit ? CtxkitError : Error)).prototype;
  const error = Object.create(prototype) as Error & Record<string | symbol, unknown>;
  Object.assign(error, data.props);
  Object.defineProperty(error, "message", { value: data.message, writable: true, configurable: true });
  Object.defineProperty(error, "name", { value: data.name, writable: true, configurable: true });
  if (data.stack !== undefined) {
    Object.defineProperty(error, "stack", { value: data.stack, writable: true, configurable: true });
  }
  if (data.ctxkit) error[Symbol.for("ctxkit.error")] = true;
  return error;
}

function isPlain(value: unknown): boolean {
  try {
    structuredClone(value);
    return typeof value !== "function";
  } catch {
    return false;
  }
}
