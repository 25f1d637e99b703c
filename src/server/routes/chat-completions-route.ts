import type { Context, Hono } from "hono";
import { fromOpenAIChat } from "../../formats/providers/openai-chat/index.ts";
import { errorAnswer, logHidden, openAIErrorBody } from "../http/error-response.ts";
import { HttpError } from "../http/http-error.ts";
import { readJson } from "../http/json-body.ts";
import { chatRequestSchema, toolDefinitions, upstreamBody, type ChatRequest } from "../proxy/chat-request.ts";
import { governStateless } from "../proxy/govern-stateless.ts";
import { relayChatStream } from "../proxy/relay-chat-stream.ts";
import { openExchange } from "../proxy/session-exchange.ts";
import { clientTurn } from "../proxy/session-inputs.ts";
import type { ServerContext, ServerEnv } from "../server-context.ts";
import { replyFromCompletion, type AssistantReply } from "../upstream/assistant-reply.ts";
import { callUpstream, type UpstreamResponse } from "../upstream/call-upstream.ts";
import { completionFailure } from "../upstream/upstream-failure.ts";
import type { UpstreamOptions } from "../upstream/upstream-options.ts";
import { commitFollowUp, requireUpstream } from "./turn-support.ts";
import { sessionHeaderValue, sessionIdFromHeader } from "../http/session-header.ts";

function parseJsonAnswer(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(
      502,
      "upstream_error",
      "the upstream model server answered with something that is not JSON",
    );
  }
}

/**
 * The reply of a whole (non-streamed) upstream answer; a 2xx body that reports an error or holds no choice is
 * thrown as the upstream failure it is, so nothing is stored.
 */
async function completionReply(
  call: UpstreamResponse,
  upstream: UpstreamOptions,
): Promise<{
  text: string;
  reply: AssistantReply;
}> {
  const text = await call.text();
  const answer = parseJsonAnswer(text);
  const failure = completionFailure(answer, [upstream.apiKey]);
  if (failure !== undefined) throw failure;
  return { text, reply: replyFromCompletion(answer) };
}

/** True for a JSON content type (an upstream that answered a streaming request with one body). */
const isJson = (contentType: string | undefined) =>
  contentType !== undefined && /^application\/(?:[\w.+-]+\+)?json\b/i.test(contentType.trim());

/**
 * `POST /v1/chat/completions`: the OpenAI-compatible proxy. With `X-Ctxkit-Session` the request's new messages
 * are appended to that session, the whole history is governed, and the reply is stored (stateful mode); without
 * it, or with `X-Ctxkit-Mode: stateless`, the full message list is governed and forwarded, and nothing is
 * stored. Answers keep the upstream's format, streamed or not.
 *
 * @example
 * registerChatCompletionsRoute(app, context);
 */
export function registerChatCompletionsRoute(app: Hono<ServerEnv>, context: ServerContext): void {
  app.post("/v1/chat/completions", async (c) => {
    const started = performance.now();
    const upstream = requireUpstream(context);
    const request = await readJson(c, chatRequestSchema, "chat completions request");
    const mode = c.req.header("x-ctxkit-mode");
    if (mode !== undefined && mode !== "stateless" && mode !== "stateful") {
      throw new HttpError(400, "invalid_input", "X-Ctxkit-Mode must be stateless or stateful");
    }
    const sessionId = sessionIdFromHeader(c.req.header("x-ctxkit-session"));
    if (sessionId === undefined || mode === "stateless") {
      if (mode === "stateful")
        throw new HttpError(400, "invalid_input", "stateful mode needs an X-Ctxkit-Session header");
      return stateless(c, context, upstream, request, started);
    }
    return stateful(c, context, upstream, request, sessionId, started);
  });
}

async function stateless(
  c: Context<ServerEnv>,
  context: ServerContext,
  upstream: UpstreamOptions,
  request: ChatRequest,
  started: number,
): Promise<Response> {
  const engine = await context.engines.engine(c.get("tenant"));
  const governed = await governStateless(
    context.stateless,
    `${c.get("tenant")} chat`,
    fromOpenAIChat(request.messages),
    engine.settings,
    toolDefinitions(request.tools),
    (event) => context.metrics.governanceEvents.inc({ type: event.type }),
    request.messages,
  );
  const body = {
    ...request,
    messages: governed.messages,
    ...(upstream.model !== undefined && { model: upstream.model }),
  };
  let call;
  try {
    call = await callUpstream(upstream, body, {
      timeoutMs: c.get("limits").upstreamTimeoutMs,
      signal: c.req.raw.signal,
    });
    context.metrics.upstreamRequests.inc({ status: String(call.status) });
  } catch (error) {
    context.metrics.upstreamRequests.inc({ status: error instanceof HttpError ? error.code : "error" });
    throw error;
  }
  const headers = {
    "Content-Type": call.contentType ?? "application/json",
    "X-Ctxkit-Tokens": String(governed.tokens.total),
    "X-Ctxkit-Checkpoint": String(governed.checkpoint),
  };
  if (request.stream === true) {
    // Nothing to record: the upstream's bytes go through untouched.
    const done = () =>
      context.metrics.proxyOverhead.observe(
        {},
        (performance.now() - started - call.headersMs - call.bodyMs()) / 1000,
      );
    const body = call.stream(done);
    return new Response(body, {
      status: call.status,
      headers: { ...headers, "Cache-Control": "no-cache" },
    });
  }
  const text = await call.text();
  context.metrics.proxyOverhead.observe(
    {},
    (performance.now() - started - call.headersMs - call.bodyMs()) / 1000,
  );
  return new Response(text, { status: call.status, headers });
}

async function stateful(
  c: Context<ServerEnv>,
  context: ServerContext,
  upstream: UpstreamOptions,
  request: ChatRequest,
  sessionId: string,
  started: number,
): Promise<Response> {
  const tenant = c.get("tenant");
  const claim = await context.directory.claim(tenant, sessionId);
  let lease;
  let exchange;
  try {
    const turn = clientTurn(fromOpenAIChat(request.messages, { sessionId: claim.storeId }));
    lease = await context.engines.lease(tenant, claim.storeId);
    exchange = await openExchange({
      lease,
      blobs: context.store.blobs,
      turn,
      tools: toolDefinitions(request.tools),
      upstream,
      provider: upstream.provider ?? "openai-compatible",
      timeoutMs: c.get("limits").upstreamTimeoutMs,
      signal: c.req.raw.signal,
      body: (messages) => upstreamBody(request, messages, upstream.model),
      onUpstream: (status) => context.metrics.upstreamRequests.inc({ status }),
    });
  } catch (error) {
    lease?.release();
    claim.release();
    throw error;
  }
  const held = lease;
  const end = () => {
    held.release();
    claim.release();
  };
  const { prepared, upstream: call } = exchange;
  const complete = async (reply: AssistantReply) => {
    const { session: stored } = await exchange.complete(reply);
    await commitFollowUp(context, tenant, claim, stored);
    const upstreamMs = exchange.upstreamHeadersMs + call.bodyMs();
    context.metrics.upstreamDuration.observe({}, upstreamMs / 1000);
    context.metrics.proxyOverhead.observe({}, (performance.now() - started - upstreamMs) / 1000);
  };
  const headers = {
    "Content-Type": call.contentType ?? (request.stream === true ? "text/event-stream" : "application/json"),
    "X-Ctxkit-Session": sessionHeaderValue(sessionId),
    "X-Ctxkit-Tokens": String(prepared.tokens.total),
    "X-Ctxkit-Checkpoint": String(prepared.checkpoint),
  };
  if (request.stream === true && isJson(call.contentType)) {
    // An error on a 200 (OpenRouter does this) instead of a stream: answered as the error it is.
    try {
      await completionReply(call, upstream);
      throw new HttpError(
        502,
        "upstream_error",
        "the upstream model server answered a streaming request with one JSON body; retry without stream",
      );
    } finally {
      held.discard();
      end();
    }
  }
  if (request.stream === true) {
    const body = relayChatStream({
      upstream: call,
      forwardUsage: request.stream_options?.include_usage === true,
      complete: async (reply) => {
        try {
          await complete(reply);
        } finally {
          end();
        }
      },
      fail: () => {
        held.discard();
        end();
      },
      errorObject: (reason) => {
        const answer = errorAnswer(reason);
        logHidden(context.log, c.get("requestId"), answer);
        return openAIErrorBody(answer).error;
      },
    });
    return new Response(body, { status: 200, headers: { ...headers, "Cache-Control": "no-cache" } });
  }
  try {
    const { text, reply } = await completionReply(call, upstream);
    await complete(reply);
    return new Response(text, { status: call.status, headers });
  } catch (error) {
    held.discard();
    throw error;
  } finally {
    end();
  }
}
