import type { Context } from "hono";
import type { EngineSession } from "../../engine/engine-session.ts";
import type { PreparedRequest, ToolDefinition } from "../../engine/prepared-request.ts";
import type { OpenAIChatMessage } from "../../formats/providers/openai-chat/index.ts";
import { errorAnswer, logHidden, type ErrorAnswer } from "../http/error-response.ts";
import { HttpError } from "../http/http-error.ts";
import { sessionHeaderValue } from "../http/session-header.ts";
import { commitFollowUp } from "../routes/turn-support.ts";
import type { ServerContext, ServerEnv } from "../server-context.ts";
import type { AssistantReply } from "../upstream/assistant-reply.ts";
import type { UpstreamResponse } from "../upstream/call-upstream.ts";
import type { UpstreamOptions } from "../upstream/upstream-options.ts";
import { openExchange } from "./session-exchange.ts";
import type { ClientTurn } from "./session-inputs.ts";

/** How a relayed stream ends the turn: the relays' `complete`, `fail` and (through `answer`) `errorObject`. */
export interface StreamEnding {
  /** Stores the reply; resolves once the turn is committed and its session released (rejects when storing failed). */
  readonly complete: (reply: AssistantReply) => Promise<void>;
  /** The stream failed before its reply was stored: nothing of the turn is stored. */
  readonly fail: (reason: unknown) => void;
  /** What a failure is answered with (logged when its details are hidden from the client). */
  readonly answer: (reason: unknown) => ErrorAnswer;
}

/** A whole (non-streamed) upstream answer, read: the reply to store and the client's answer once it is stored. */
export interface ReadAnswer {
  readonly reply: AssistantReply;
  respond(headers: Record<string, string>): Response;
}

/**
 * One API's wire format, as a stateful proxy turn serves it (one per request: it holds the client's request).
 * `serveProxyTurn` owns the session; the wire only translates.
 */
export interface ProxyWire {
  readonly upstream: UpstreamOptions;
  /** The provider recorded with the reply when the upstream names none (`anthropic` for the Messages API). */
  readonly provider: string;
  /** The upstream endpoint under its base URL. Default `chat/completions`. */
  readonly path?: string;
  /** Headers of the upstream request (e.g. the client's `anthropic-version`). */
  readonly upstreamHeaders?: Readonly<Record<string, string>>;
  /** Headers of the answer besides the session's (e.g. `X-Ctxkit-Stored`). */
  readonly answerHeaders?: Readonly<Record<string, string>>;
  /** Tool definitions of the request, for the token budget. */
  readonly tools: readonly ToolDefinition[];
  /** True when the client asked for a stream. */
  readonly stream: boolean;
  /**
   * The request's new messages for the leased session (read against its history); undefined when the request
   * is another conversation than the session's, served by `elsewhere` with nothing stored.
   */
  inputs(session: EngineSession, storeId: string): Promise<ClientTurn | undefined>;
  /** Serves a request `inputs` found to be another conversation, once the session is released. */
  elsewhere?(): Promise<Response>;
  /** The upstream body around the governed request (`chat`: its messages as OpenAI chat messages). */
  body(prepared: PreparedRequest, chat: OpenAIChatMessage[]): unknown;
  /** The client's stream of a streamed answer, ending the turn through `ending`. */
  relay(call: UpstreamResponse, ending: StreamEnding, headers: Record<string, string>): Promise<Response>;
  /** Reads a whole answer (a 2xx body that reports an error is thrown as the upstream failure it is). */
  read(call: UpstreamResponse): Promise<ReadAnswer>;
}

/**
 * A `text/event-stream` answer with the given headers (a `Content-Type` among them wins), never cached.
 *
 * @example
 * return eventStream(relayChatStream(options), headers);
 */
export function eventStream(body: ReadableStream<Uint8Array>, headers: Record<string, string>): Response {
  return new Response(body, {
    status: 200,
    headers: { "Content-Type": "text/event-stream", ...headers, "Cache-Control": "no-cache" },
  });
}

/**
 * The JSON of an upstream's whole answer (with `object`, a JSON object); 502 `upstream_error` otherwise.
 *
 * @example
 * const answer = upstreamJson(await call.text());
 */
export function upstreamJson(text: string, object = false): unknown {
  try {
    const value: unknown = JSON.parse(text);
    if (!object || (typeof value === "object" && value !== null && !Array.isArray(value))) return value;
  } catch {
    // Answered below.
  }
  throw new HttpError(
    502,
    "upstream_error",
    "the upstream model server answered with something that is not JSON",
  );
}

/** A promise with its resolve and reject (`Promise.withResolvers`, not in the ES2023 library). */
function resolvers<T>() {
  let resolve!: (value: T | PromiseLike<T>) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  return { promise, resolve, reject };
}

/**
 * One stateful proxy turn, whatever the API: claims the session named `sessionId`, leases it, opens a turn with
 * the request's new messages, sends the governed history upstream (recovering from an overflow, see
 * `openExchange`), and stores the reply once the answer was read — a whole one before the client gets it, a
 * stream before its last event is forwarded. The session is released in one place, when the turn ends: stored,
 * failed (nothing of it stored: the session reloads from the store), or not the session's conversation at all.
 * An error before the answer started is thrown (the route's error shape answers it); a stream's own failure is
 * its relay's to tell.
 *
 * @example
 * return serveProxyTurn(c, context, { sessionId, started }, chatWire(c, request, upstream));
 */
export async function serveProxyTurn(
  c: Context<ServerEnv>,
  context: ServerContext,
  { sessionId, started }: { readonly sessionId: string; readonly started: number },
  wire: ProxyWire,
): Promise<Response> {
  const tenant = c.get("tenant");
  const claim = await context.directory.claim(tenant, sessionId);
  const served = resolvers<Response>();
  // Resolves true once the turn is stored, false when the request was not the session's; settles after release.
  const turn = (async (): Promise<boolean> => {
    let lease;
    let opened = false;
    let stored = false;
    try {
      lease = await context.engines.lease(tenant, claim.storeId);
      const inputs = await wire.inputs(lease.session, claim.storeId);
      if (inputs === undefined) return false;
      opened = true;
      const exchange = await openExchange({
        lease,
        blobs: context.store.blobs,
        turn: inputs,
        tools: wire.tools,
        upstream: wire.upstream,
        provider: wire.upstream.provider ?? wire.provider,
        timeoutMs: c.get("limits").upstreamTimeoutMs,
        signal: c.req.raw.signal,
        body: (chat, prepared) => wire.body(prepared, chat),
        ...(wire.path !== undefined && { path: wire.path }),
        ...(wire.upstreamHeaders !== undefined && { headers: wire.upstreamHeaders }),
        onUpstream: (status) => context.metrics.upstreamRequests.inc({ status }),
      });
      const { prepared, upstream: call } = exchange;
      const headers = {
        ...wire.answerHeaders,
        "X-Ctxkit-Session": sessionHeaderValue(sessionId),
        "X-Ctxkit-Tokens": String(prepared.tokens.total),
        "X-Ctxkit-Checkpoint": String(prepared.checkpoint),
      };
      let reply: AssistantReply;
      let answer: ReadAnswer | undefined;
      if (wire.stream) {
        const replied = resolvers<AssistantReply>();
        const ending: StreamEnding = {
          complete: async (reply) => {
            replied.resolve(reply);
            await turn;
          },
          fail: (reason) => replied.reject(reason),
          answer: (reason) => {
            const answer = errorAnswer(reason);
            logHidden(context.log, c.get("requestId"), answer);
            return answer;
          },
        };
        replied.promise.catch(() => undefined); // awaited below, once the client has its answer
        served.resolve(await wire.relay(call, ending, headers));
        reply = await replied.promise;
      } else {
        answer = await wire.read(call);
        reply = answer.reply;
      }
      const { session: record } = await exchange.complete(reply);
      await commitFollowUp(context, tenant, claim, record);
      stored = true;
      const upstreamMs = exchange.upstreamHeadersMs + call.bodyMs();
      context.metrics.upstreamDuration.observe({}, upstreamMs / 1000);
      context.metrics.proxyOverhead.observe({}, (performance.now() - started - upstreamMs) / 1000);
      if (answer !== undefined) served.resolve(answer.respond(headers));
      return true;
    } finally {
      if (opened && !stored) lease?.discard();
      lease?.release();
      claim.release();
    }
  })();
  turn.then(
    (stored) => {
      if (!stored) served.resolve(wire.elsewhere!());
    },
    // Once the answer started, a failure is the relay's to report (this rejection then changes nothing).
    (error: unknown) => served.reject(error),
  );
  return served.promise;
}
