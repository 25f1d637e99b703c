import { transportFailure } from "../../providers/error-chain.ts";
import { HttpError } from "../http/http-error.ts";
import { upstreamUrl, type UpstreamOptions } from "./upstream-options.ts";
import { upstreamFailure } from "./upstream-failure.ts";

/** A successful upstream answer, with an idle timer the caller keeps alive while it reads the body. */
export interface UpstreamResponse {
  readonly response: Response;
  /** Milliseconds from sending the request to its response headers. */
  readonly headersMs: number;
  /** Restarts the idle timer (call it on every chunk read). */
  touch(): void;
  /** Stops the timer once the body is read (or abandoned). */
  finish(): void;
  /** Aborts the upstream request (the client went away); reading the body then fails. */
  abort(reason?: unknown): void;
  /** Reads the whole body as text under the idle timer (504 when the upstream stalls). */
  text(): Promise<string>;
  /** Milliseconds from the response headers until `finish()` (0 before). */
  bodyMs(): number;
  /** What an error while reading the body means (504 after the idle timeout, 502 for a broken connection). */
  failure(error: unknown): unknown;
}

/** Options of `callUpstream`. */
export interface CallUpstreamOptions {
  /** Time allowed until the response headers, and between two chunks of the body. */
  readonly timeoutMs: number;
  /** Aborts the call when the client goes away. */
  readonly signal?: AbortSignal;
  /** The endpoint under the base URL. Default `chat/completions`. */
  readonly path?: string;
  /** Headers of this request (e.g. the client's `anthropic-version`); the upstream's own headers win. */
  readonly headers?: Readonly<Record<string, string>>;
}

function authHeader(upstream: UpstreamOptions): Record<string, string> {
  if (upstream.apiKey === undefined) return {};
  return upstream.auth === "x-api-key"
    ? { "x-api-key": upstream.apiKey }
    : { authorization: `Bearer ${upstream.apiKey}` };
}

const TIMED_OUT = Symbol("upstream timed out");

function headersOf(response: Response): Record<string, string> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, key) => (headers[key] = value));
  return headers;
}

/**
 * POSTs a body to the upstream (chat completions unless `options.path` says otherwise). Resolves with the response when its status is 2xx; otherwise
 * throws the mapped `HttpError` (see `upstreamFailure`), 504 `upstream_timeout` when the upstream is silent for
 * `timeoutMs`, or 502 `upstream_error` when it cannot be reached. A client abort rejects with the abort reason.
 *
 * @example
 * const { response, finish } = await callUpstream(upstream, body, { timeoutMs: 120_000, signal });
 */
export async function callUpstream(
  upstream: UpstreamOptions,
  body: unknown,
  options: CallUpstreamOptions,
): Promise<UpstreamResponse> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const touch = () => {
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(TIMED_OUT), options.timeoutMs);
  };
  let finishedAt: number | undefined;
  const finish = () => {
    clearTimeout(timer);
    finishedAt ??= performance.now();
    options.signal?.removeEventListener("abort", onClientAbort);
  };
  const onClientAbort = () => controller.abort(options.signal?.reason);
  if (options.signal?.aborted) throw options.signal.reason;
  options.signal?.addEventListener("abort", onClientAbort, { once: true });
  touch();
  const started = performance.now();
  let response: Response;
  try {
    response = await fetch(upstreamUrl(upstream, options.path ?? "chat/completions"), {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...options.headers,
        ...upstream.headers,
        ...authHeader(upstream),
      },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
  } catch (error) {
    finish();
    throw callFailure(error, controller.signal, options.timeoutMs);
  }
  const headersAt = performance.now();
  const headersMs = headersAt - started;
  if (!response.ok) {
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      throw callFailure(error, controller.signal, options.timeoutMs);
    } finally {
      finish();
    }
    throw upstreamFailure(response.status, headersOf(response), text, [upstream.apiKey]);
  }
  touch();
  const text = async () => {
    const decoder = new TextDecoder();
    let result = "";
    try {
      const reader = response.body?.getReader();
      for (;;) {
        const chunk = await reader?.read();
        if (chunk === undefined || chunk.done) break;
        touch();
        result += decoder.decode(chunk.value, { stream: true });
      }
      return result + decoder.decode();
    } catch (error) {
      throw callFailure(error, controller.signal, options.timeoutMs);
    } finally {
      finish();
    }
  };
  return {
    response,
    headersMs,
    touch,
    finish,
    abort: (reason) => {
      finish();
      controller.abort(reason);
    },
    text,
    bodyMs: () => (finishedAt === undefined ? 0 : finishedAt - headersAt),
    failure: (error) => callFailure(error, controller.signal, options.timeoutMs),
  };
}

/**
 * What a failed fetch or body read means: a timeout (504), the client's own abort (rethrown as is), or an
 * unreachable upstream (502).
 *
 * @example
 * catch (error) { throw callFailure(error, controller.signal, 120_000); }
 */
export function callFailure(error: unknown, signal: AbortSignal, timeoutMs: number): unknown {
  if (signal.aborted && signal.reason === TIMED_OUT) {
    return new HttpError(
      504,
      "upstream_timeout",
      `the upstream model server sent nothing for ${Math.round(timeoutMs / 1000)} s; retry, or raise the upstream timeout`,
    );
  }
  if (signal.aborted) return signal.reason;
  const failure = transportFailure(error);
  if (failure?.kind === "timeout") {
    return new HttpError(
      504,
      "upstream_timeout",
      `the upstream model server timed out (${failure.code}); retry later`,
    );
  }
  const why = failure === undefined ? "" : ` (${failure.code})`;
  return new HttpError(
    502,
    "upstream_error",
    `the upstream model server could not be reached${why}; is it running?`,
  );
}
