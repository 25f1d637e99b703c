/** Node and undici error codes meaning the server could not be reached or dropped the connection. */
const networkCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "EPIPE",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "ConnectionRefused",
  "ConnectionClosed",
  "FailedToOpenSocket",
]);

/** Codes meaning the connection or the response took too long. */
const timeoutCodes = new Set([
  "ETIMEDOUT",
  "ESOCKETTIMEDOUT",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);

/** A low-level failure found somewhere in an error's cause chain. */
export interface TransportFailure {
  readonly kind: "network" | "timeout";
  /** The Node/undici code, or the error name for DOMException timeouts. */
  readonly code: string;
  /** `host:port` when the socket error says where it tried to connect. */
  readonly address?: string;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined;
}

/**
 * The error and everything it wraps, outermost first: `cause`, AggregateError `errors`, and AI SDK RetryError
 * `errors`. Cycles are cut and the walk is bounded.
 *
 * @example
 * errorChain(new Error("fetch failed", { cause: socketError })); // [outer, socketError]
 */
export function errorChain(error: unknown): unknown[] {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  const chain: unknown[] = [];
  while (queue.length > 0 && chain.length < 32) {
    const current = queue.shift();
    if (current === undefined || current === null || seen.has(current)) continue;
    seen.add(current);
    chain.push(current);
    const fields = record(current);
    if (fields === undefined) continue;
    if (fields["cause"] !== undefined) queue.push(fields["cause"]);
    if (Array.isArray(fields["errors"])) queue.push(...(fields["errors"] as unknown[]));
  }
  return chain;
}

/**
 * The first socket-level failure (ECONNREFUSED, ENOTFOUND, ETIMEDOUT, UND_ERR_*, TimeoutError…) in the chain.
 *
 * @example
 * transportFailure(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }))?.kind; // "network"
 */
export function transportFailure(error: unknown): TransportFailure | undefined {
  for (const item of errorChain(error)) {
    const fields = record(item);
    if (fields === undefined) continue;
    const code = fields["code"];
    const address =
      typeof fields["address"] === "string"
        ? `${fields["address"]}${typeof fields["port"] === "number" ? `:${fields["port"]}` : ""}`
        : typeof fields["hostname"] === "string"
          ? fields["hostname"]
          : undefined;
    const where = address === undefined ? {} : { address };
    if (typeof code === "string" && networkCodes.has(code)) return { kind: "network", code, ...where };
    if (typeof code === "string" && timeoutCodes.has(code)) return { kind: "timeout", code, ...where };
    if (fields["name"] === "TimeoutError") return { kind: "timeout", code: "TimeoutError" };
  }
  return undefined;
}
