import type { Context } from "hono";
import { HttpError } from "../http/http-error.ts";
import type { ServerContext, ServerEnv } from "../server-context.ts";
import { callUpstream } from "../upstream/call-upstream.ts";
import type { UpstreamOptions } from "../upstream/upstream-options.ts";

/** A stateless request as it goes upstream. */
export interface StatelessForward {
  readonly upstream: UpstreamOptions;
  /** The governed body. */
  readonly body: unknown;
  /** The endpoint under the upstream's base URL. Default `chat/completions`. */
  readonly path?: string;
  /** Headers of the upstream request (e.g. the client's `anthropic-version`). */
  readonly headers?: Readonly<Record<string, string>>;
  readonly stream: boolean;
  /** When the request arrived (`performance.now()`), for the proxy's overhead. */
  readonly started: number;
}

/**
 * Sends a stateless request's governed body upstream and answers with the upstream's answer as it came, whole
 * or streamed, with `answerHeaders` (what governance did): nothing is recorded. The upstream's outcome and the
 * proxy's overhead are counted.
 *
 * @example
 * return forwardStateless(c, context, { upstream, body, stream: false, started }, { "X-Ctxkit-Tokens": "812" });
 */
export async function forwardStateless(
  c: Context<ServerEnv>,
  context: ServerContext,
  forward: StatelessForward,
  answerHeaders: Readonly<Record<string, string>>,
): Promise<Response> {
  let call;
  try {
    call = await callUpstream(forward.upstream, forward.body, {
      timeoutMs: c.get("limits").upstreamTimeoutMs,
      signal: c.req.raw.signal,
      ...(forward.path !== undefined && { path: forward.path }),
      ...(forward.headers !== undefined && { headers: forward.headers }),
    });
    context.metrics.upstreamRequests.inc({ status: String(call.status) });
  } catch (error) {
    context.metrics.upstreamRequests.inc({ status: error instanceof HttpError ? error.code : "error" });
    throw error;
  }
  const headers = { ...answerHeaders, "Content-Type": call.contentType ?? "application/json" };
  const done = () =>
    context.metrics.proxyOverhead.observe(
      {},
      (performance.now() - forward.started - call.headersMs - call.bodyMs()) / 1000,
    );
  if (forward.stream) {
    // Nothing to record: the upstream's bytes go through untouched.
    return new Response(call.stream(done), {
      status: call.status,
      headers: { ...headers, "Cache-Control": "no-cache" },
    });
  }
  const text = await call.text();
  done();
  return new Response(text, { status: call.status, headers });
}
