import { SpanStatusCode, type Attributes, type Histogram, type Tracer } from "@opentelemetry/api";
import type { BlobStore } from "../store/blob-store.ts";
import type { SessionStore } from "../store/session-store.ts";
import { meterOf, operationAttributes, tracerOf, type TelemetryOptions } from "./telemetry-options.ts";

type Operations<Target> = {
  readonly [Name in keyof Target as Target[Name] extends (...args: never[]) => unknown ? Name : never]: (
    args: readonly unknown[],
  ) => Attributes;
};

const sessionArgument = (args: readonly unknown[]): Attributes =>
  typeof args[0] === "string" ? { "ctxkit.session.id": args[0] } : {};
const none = (): Attributes => ({});

/** Every store operation with the attributes read from its arguments (ids and counts, never content). */
const storeOperations: Operations<SessionStore> = {
  appendTurn: (args) => ({
    ...sessionArgument(args),
    "ctxkit.store.messageCount": Array.isArray(args[1]) ? args[1].length : 0,
  }),
  loadMessages: sessionArgument,
  applyCompaction: sessionArgument,
  attachCompactSummary: sessionArgument,
  loadGovernorState: sessionArgument,
  removeLastMessage: sessionArgument,
  getSession: sessionArgument,
  listSessions: none,
  searchSessions: none,
  latestSession: none,
  forkSession: sessionArgument,
  renameSession: sessionArgument,
  deleteSession: sessionArgument,
  cleanup: (args) => (typeof args[0] === "number" ? { "ctxkit.store.olderThanDays": args[0] } : {}),
  getSyncState: sessionArgument,
  setSyncState: sessionArgument,
  dumpSession: sessionArgument,
  restoreSession: (args) => {
    const id = (args[0] as { session?: { id?: unknown } } | undefined)?.session?.id;
    return typeof id === "string" ? { "ctxkit.session.id": id } : {};
  },
  restoreSessions: (args) => (Array.isArray(args[0]) ? { "ctxkit.store.sessionCount": args[0].length } : {}),
  close: none,
};

const refArgument = (args: readonly unknown[]): Attributes =>
  typeof args[0] === "string" ? { "ctxkit.blob.ref": args[0] } : {};

const blobOperations: Operations<BlobStore> = {
  putText: sessionArgument,
  putBytes: sessionArgument,
  getText: refArgument,
  getBytes: refArgument,
  stat: refArgument,
  list: sessionArgument,
  delete: sessionArgument,
};

/** Attributes read from an operation's result. */
function resultAttributes(operation: string, result: unknown): Attributes {
  if (operation === "loadMessages" && Array.isArray(result))
    return { "ctxkit.store.messageCount": result.length };
  if (operation === "searchSessions" && Array.isArray(result))
    return { "ctxkit.store.hitCount": result.length };
  return {};
}

interface Instruments {
  readonly tracer: Tracer;
  readonly duration: Histogram;
  readonly options: TelemetryOptions;
}

function wrap<Target extends object>(
  target: Target,
  prefix: string,
  operations: Operations<Target>,
  instruments: Instruments,
  overrides: Partial<Record<PropertyKey, unknown>> = {},
): Target {
  const wrapped = new Map<PropertyKey, unknown>();
  const attributesOf = operations as unknown as Record<PropertyKey, (args: readonly unknown[]) => Attributes>;
  return new Proxy(target, {
    get(object, property) {
      if (property in overrides) return overrides[property];
      const value = Reflect.get(object, property, object) as unknown;
      if (typeof value !== "function") return value;
      let method = wrapped.get(property);
      if (method !== undefined) return method;
      const attributes = attributesOf[property];
      const name = String(property);
      method =
        attributes === undefined
          ? value.bind(object)
          : (...args: unknown[]) =>
              traced(instruments, `${prefix}.${name}`, name, attributes(args), () =>
                (value as (...args: unknown[]) => unknown).apply(object, args),
              );
      wrapped.set(property, method);
      return method;
    },
  });
}

function traced(
  { tracer, duration, options }: Instruments,
  operationId: string,
  operation: string,
  attributes: Attributes,
  run: () => unknown,
): Promise<unknown> {
  return tracer.startActiveSpan(
    operationId,
    { attributes: { ...operationAttributes(operationId, options), ...attributes } },
    async (span) => {
      const started = performance.now();
      let errorType: string | undefined;
      try {
        const result = await run();
        span.setAttributes(resultAttributes(operation, result));
        return result;
      } catch (error) {
        errorType = errorTypeOf(error);
        span.recordException(error as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
        span.setAttribute("error.type", errorType);
        throw error;
      } finally {
        duration.record(performance.now() - started, {
          "ctxkit.store.operation": operationId.slice("ctxkit.store.".length),
          ...(errorType !== undefined && { "error.type": errorType }),
        });
        span.end();
      }
    },
  );
}

function errorTypeOf(error: unknown): string {
  if (typeof error === "object" && error !== null) {
    const { code, name } = error as { code?: unknown; name?: unknown };
    if (typeof code === "string") return code;
    if (typeof name === "string") return name;
  }
  return "unknown";
}

/**
 * A session store whose every operation is an OpenTelemetry span — `ctxkit.store.appendTurn`,
 * `ctxkit.store.loadMessages`, …, `ctxkit.store.blobs.putText` — with the session id, message counts and, on a
 * failure, the exception and `error.type` (the ctxkit error code); and whose durations go to the histogram
 * `ctxkit.store.operation.duration` (milliseconds, by `ctxkit.store.operation` and `error.type`). Everything else
 * about the store is unchanged. Without a registered SDK the spans and metrics are no-ops.
 *
 * @example
 * ```ts
 * const store = instrumentStore(await openSqliteSessionStore({ path: "agent.db" }));
 * const engine = await createContextEngine({ store, model });
 * ```
 */
export function instrumentStore<Store extends SessionStore>(
  store: Store,
  options: TelemetryOptions = {},
): Store {
  const instruments: Instruments = {
    tracer: tracerOf(options),
    duration: meterOf(options).createHistogram("ctxkit.store.operation.duration", {
      description: "Duration of session store operations",
      unit: "ms",
    }),
    options,
  };
  const blobs = wrap(store.blobs, "ctxkit.store.blobs", blobOperations, instruments);
  // A backend's own extra methods pass through unwrapped.
  const operations = storeOperations as unknown as Operations<Store>;
  return wrap(store, "ctxkit.store", operations, instruments, { blobs });
}
