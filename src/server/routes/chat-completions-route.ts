import type { Context, Hono } from "hono";
import { fromOpenAIChat } from "../../formats/providers/openai-chat/index.ts";
import { openAIErrorBody } from "../http/error-response.ts";
import { HttpError } from "../http/http-error.ts";
import { readJson } from "../http/json-body.ts";
import { chatRequestSchema, toolDefinitions, upstreamBody, type ChatRequest } from "../proxy/chat-request.ts";
import { forwardStateless } from "../proxy/forward-stateless.ts";
import { governStateless } from "../proxy/govern-stateless.ts";
import { relayChatStream } from "../proxy/relay-chat-stream.ts";
import { eventStream, upstreamJson, type ProxyWire } from "../proxy/proxy-wire.ts";
import { serveProxyTurn } from "../proxy/serve-proxy-turn.ts";
import { upstreamChatMessages } from "../proxy/chat-message-pieces.ts";
import { clientTurn } from "../proxy/session-inputs.ts";
import type { ServerContext, ServerEnv } from "../server-context.ts";
import { replyFromCompletion, type AssistantReply } from "../upstream/assistant-reply.ts";
import type { UpstreamResponse } from "../upstream/call-upstream.ts";
import { completionFailure } from "../upstream/upstream-failure.ts";
import type { UpstreamOptions } from "../upstream/upstream-options.ts";
import { requireUpstream } from "./turn-support.ts";
import { requestedSession } from "../http/session-header.ts";

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
  const answer = upstreamJson(text);
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
    const sessionId = requestedSession((name) => c.req.header(name));
    if (sessionId === undefined) return stateless(c, context, upstream, request, started);
    return serveProxyTurn(c, context, { sessionId, started }, chatWire(request, upstream, context));
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
  return forwardStateless(
    c,
    context,
    { upstream, body, stream: request.stream === true, started },
    { "X-Ctxkit-Tokens": String(governed.tokens.total), "X-Ctxkit-Checkpoint": String(governed.checkpoint) },
  );
}

/** The chat completions wire: the request's new messages, the upstream body around the governed ones. */
function chatWire(request: ChatRequest, upstream: UpstreamOptions, context: ServerContext): ProxyWire {
  return {
    upstream,
    provider: "openai-compatible",
    tools: toolDefinitions(request.tools),
    inputs: async (_session, storeId) => clientTurn(fromOpenAIChat(request.messages, { sessionId: storeId })),
    body: async (prepared) =>
      upstreamBody(
        request,
        await upstreamChatMessages(prepared, context.store.blobs, upstream),
        upstream.model,
      ),
    async respond({ call, headers }, ending) {
      if (request.stream !== true) {
        const { text, reply } = await completionReply(call, upstream);
        await ending.complete(reply);
        const type = call.contentType ?? "application/json";
        return new Response(text, { status: call.status, headers: { "Content-Type": type, ...headers } });
      }
      if (isJson(call.contentType)) {
        // An error on a 200 (OpenRouter does this) instead of a stream: answered as the error it is.
        await completionReply(call, upstream);
        throw new HttpError(
          502,
          "upstream_error",
          "the upstream model server answered a streaming request with one JSON body; retry without stream",
        );
      }
      const body = relayChatStream({
        upstream: call,
        forwardUsage: request.stream_options?.include_usage === true,
        ...ending,
        errorObject: (reason) => openAIErrorBody(ending.answer(reason)).error,
      });
      return eventStream(body, {
        ...headers,
        ...(call.contentType !== undefined && { "Content-Type": call.contentType }),
      });
    },
  };
}
