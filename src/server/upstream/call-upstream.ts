import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { transportFailure } from "../../providers/error-chain.ts";
import { HttpError } from "../http/http-error.ts";
import { upstreamUrl, type UpstreamOptions } from "./upstream-options.ts";
import { upstreamFailure } from "./upstream-failure.ts";
import { bodyChunks } from "./json-text.ts";

/** A successful upstream answer whose body is read under an idle timer (504 when the upstream stalls). */
export interface UpstreamResponse {
  /** The HTTP status (2xx). */
  readonly status: number;
  /** The response's `Content-Type`, when it has one. */
  readonly contentType: string | undefined;
  /** Milliseconds from sending the request to its response headers. */
  readonly headersMs: number;
  /** Aborts the upstream request (the client went away); reading the body then fails. */
  abort(reason?: unknown): void;
  /** Reads the whole body as text. */
  text(): Promise<string>;
  /**
   * The body's chunks as they arrive. A failure is mapped as `failure` maps it; leaving the loop early aborts the
   * upstream request.
   */
  chunks(): AsyncIterable<Uint8Array>;
  /** The body as a web stream (for a response relayed untouched); `onEnd` runs once it was read to its end. */
  stream(onEnd?: () => void): ReadableStream<Uint8Array>;
  /** Milliseconds from the response headers until the body was read (or abandoned); 0 before. */
  bodyMs(): number;
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

function headersOf(response: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(response.headers)) {
    if (value !== undefined) headers[key] = Array.isArray(value) ? value.join(", ") : value;
  }
  return headers;
}

/**
 * One POST with `node:http`/`node:https` (their global agents: keep-alive, and the environment's proxy under
 * `NODE_USE_ENV_PROXY`). Cheaper per request than `fetch`, whose web streams the proxy does not need.
 */
function post(
  url: URL,
  headers: Record<string, string>,
  payload: readonly Buffer[],
  signal: AbortSignal,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const send =
      url.protocol === "https:" ? httpsRequest : url.protocol === "http:" ? httpRequest : undefined;
    if (send === undefined) {
      reject(new TypeError(`the upstream URL ${url.origin} is neither http: nor https:`));
      return;
    }
    try {
      let length = 0;
      for (const chunk of payload) length += chunk.length;
      const request = send(url, {
        method: "POST",
        headers: { ...headers, "content-length": String(length) },
        signal,
      });
      // Kept for the whole exchange: a failure after the headers also ends the response, where it is read.
      request.on("error", reject);
      request.once("response", resolve);
      // Corked: the chunks leave in one vectored write, without being copied into one buffer first.
      request.cork();
      for (const chunk of payload) request.write(chunk);
      request.uncork();
      request.end();
    } catch (error) {
      // e.g. a header value Node refuses to send.
      reject(error instanceof Error ? error : new Error(String(error)));
    }
  });
}

const cutShort = () =>
  Object.assign(new Error("the upstream closed the connection mid-body"), { code: "ECONNRESET" });

/** Reads a response body to its end as UTF-8 text (it may have failed already, before anyone read it). */
function readText(response: IncomingMessage, onChunk: () => void): Promise<string> {
  return new Promise((resolve, reject) => {
    if (response.errored !== null || response.destroyed) {
      reject(response.errored ?? cutShort());
      return;
    }
    let text = "";
    response.setEncoding("utf8");
    response.on("data", (chunk: string) => {
      onChunk();
      text += chunk;
    });
    response.once("end", () => resolve(text));
    response.once("error", reject);
    response.once("close", () => {
      if (!response.complete) reject(cutShort());
    });
  });
}

/** Where a redirect points (origin and path only: a query may hold a token). */
function redirectTarget(location: string, upstream: UpstreamOptions): string {
  try {
    const target = new URL(location, upstreamUrl(upstream, ""));
    return `${target.origin}${target.pathname}`;
  } catch {
    return "an invalid location";
  }
}

/** The request body's bytes (`bodyChunks`); a 400 (not a failed connection) for a value too deep to write. */
function serializeBody(body: unknown): Buffer[] {
  try {
    return bodyChunks(body);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new HttpError(400, "invalid_input", "the request nests too deeply to be sent upstream; flatten it");
  }
}

/**
 * POSTs a body to the upstream (chat completions unless `options.path` says otherwise). Resolves with the response when its status is 2xx; otherwise
 * throws the mapped `HttpError` (see `upstreamFailure`), 504 `upstream_timeout` when the upstream is silent for
 * `timeoutMs`, or 502 `upstream_error` when it cannot be reached. A client abort rejects with the abort reason.
 *
 * @example
 * const call = await callUpstream(upstream, body, { timeoutMs: 120_000, signal });
 * const text = await call.text();
 */
export async function callUpstream(
  upstream: UpstreamOptions,
  body: unknown,
  options: CallUpstreamOptions,
): Promise<UpstreamResponse> {
  const payload = serializeBody(body);
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let finishedAt: number | undefined;
  const touch = () => {
    if (finishedAt !== undefined) return; // refresh() would re-arm a cleared timer
    if (timer === undefined) timer = setTimeout(() => controller.abort(TIMED_OUT), options.timeoutMs);
    else timer.refresh();
  };
  const finish = () => {
    clearTimeout(timer);
    finishedAt ??= performance.now();
    options.signal?.removeEventListener("abort", onClientAbort);
  };
  const onClientAbort = () => controller.abort(options.signal?.reason);
  const failure = (error: unknown) => callFailure(error, controller.signal, options.timeoutMs);
  if (options.signal?.aborted) throw options.signal.reason;
  options.signal?.addEventListener("abort", onClientAbort, { once: true });
  touch();
  const started = performance.now();
  let response: IncomingMessage;
  try {
    const url = new URL(upstreamUrl(upstream, options.path ?? "chat/completions"));
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      // Bodies are relayed byte for byte: ask for them unencoded.
      "accept-encoding": "identity",
      ...options.headers,
      ...upstream.headers,
      ...authHeader(upstream),
    };
    response = await post(url, headers, payload, controller.signal);
  } catch (error) {
    finish();
    throw failure(error);
  }
  const headersAt = performance.now();
  // Read errors reach whoever reads the body; until then (or if nobody does) one must not crash the process.
  response.on("error", () => undefined);
  const status = response.statusCode ?? 0;
  if (status < 200 || status > 299) {
    let text: string;
    try {
      text = await readText(response, touch);
    } catch (error) {
      throw failure(error);
    } finally {
      finish();
    }
    const location = response.headers.location;
    if (status >= 300 && status < 400 && location !== undefined) {
      throw new HttpError(
        502,
        "upstream_error",
        `the upstream model server redirects (${status}) to ${redirectTarget(location, upstream)}; set the upstream URL to where it redirects`,
      );
    }
    throw upstreamFailure(status, headersOf(response), text, [upstream.apiKey]);
  }
  touch();
  async function* chunks(): AsyncGenerator<Uint8Array> {
    let ended = false;
    try {
      for await (const chunk of response) {
        touch();
        yield chunk as Buffer;
      }
      ended = true;
    } catch (error) {
      throw failure(error);
    } finally {
      finish();
      if (!ended) controller.abort(new Error("the body was not read to its end"));
    }
  }
  const abort = (reason?: unknown) => {
    finish();
    controller.abort(reason);
  };
  return {
    status,
    contentType: response.headers["content-type"],
    headersMs: headersAt - started,
    abort,
    text: async () => {
      try {
        return await readText(response, touch);
      } catch (error) {
        throw failure(error);
      } finally {
        finish();
      }
    },
    chunks,
    stream: (onEnd) => {
      const source = chunks();
      return new ReadableStream<Uint8Array>({
        async pull(controller) {
          const next = await source.next();
          if (next.done === true) {
            controller.close();
            onEnd?.();
          } else controller.enqueue(next.value);
        },
        async cancel(reason) {
          // At once: a read in progress would otherwise hold the generator until the upstream's next chunk.
          abort(reason);
          await source.return(undefined);
        },
      });
    },
    bodyMs: () => (finishedAt === undefined ? 0 : finishedAt - headersAt),
  };
}

/**
 * What a failed upstream call or body read means: a timeout (504), the client's own abort (rethrown as is), or
 * an unreachable upstream (502).
 */
function callFailure(error: unknown, signal: AbortSignal, timeoutMs: number): unknown {
  if (signal.aborted && signal.reason === TIMED_OUT) {
    return new HttpError(
      504,
      "upstream_timeout",
      `the upstream model server sent nothing for ${Math.round(timeoutMs / 1000)} s; retry, or raise the upstream timeout`,
    );
  }
  if (signal.aborted) return signal.reason;
  if (error instanceof HttpError) return error;
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
