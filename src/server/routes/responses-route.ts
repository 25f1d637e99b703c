import type { Context, Hono } from "hono";
import { toOpenAIResponses } from "../../formats/providers/openai-responses/index.ts";
import { inlineMedia } from "../../store/media-blobs.ts";
import { readJson } from "../http/json-body.ts";
import { forwardStateless } from "../proxy/forward-stateless.ts";
import { governStateless } from "../proxy/govern-stateless.ts";
import { relayResponsesStream } from "../proxy/relay-responses-stream.ts";
import { responsesInput, responsesMessages } from "../proxy/responses-items.ts";
import { replyFromResponse } from "../proxy/responses-reply.ts";
import { requireLatestResponse } from "../proxy/responses-chain.ts";
import {
  RESPONSE_ID_KEY,
  responseId,
  responsesRequestSchema,
  responsesToolDefinitions,
  responsesUpstreamBody,
  type ResponsesRequest,
} from "../proxy/responses-request.ts";
import { newMessages } from "../proxy/responses-session-inputs.ts";
import { responsesTarget, type ResponsesTarget } from "../proxy/responses-target.ts";
import { eventStream, upstreamJson, type ProxyWire } from "../proxy/proxy-wire.ts";
import { serveProxyTurn } from "../proxy/serve-proxy-turn.ts";
import { clientTurn } from "../proxy/session-inputs.ts";
import type { ServerContext, ServerEnv } from "../server-context.ts";
import type { AssistantReply } from "../upstream/assistant-reply.ts";
import type { UpstreamOptions } from "../upstream/upstream-options.ts";
import { requireUpstream } from "./turn-support.ts";
import { sessionIdFromHeader } from "../http/session-header.ts";

/**
 * `POST /v1/responses`: the OpenAI Responses proxy. A request chained with `previous_response_id` (an id this
 * server answered with), or sent with `X-Ctxkit-Session`, or sent without `store: false` is stateful: its new
 * input is appended to the session (a client that resends the whole conversation, like Codex, has the part the
 * session holds skipped), the whole history is governed and sent upstream with `store: false`, and the reply is
 * stored with the answer's id (`resp_ck.<session>.r<random>`, unique), which chains the next request, from the
 * session's latest response only (an older one is a 409: branching needs a fork). With
 * `store: false` and no session header (or with `X-Ctxkit-Mode: stateless`) nothing is stored: the client's
 * full input is governed statelessly. Streams keep the Responses event format; errors have OpenAI's shape.
 *
 * @example
 * registerResponsesRoute(app, context);
 */
export function registerResponsesRoute(app: Hono<ServerEnv>, context: ServerContext): void {
  app.post("/v1/responses", async (c) => {
    const started = performance.now();
    const upstream = requireUpstream(context);
    const request = await readJson(c, responsesRequestSchema, "responses request");
    const target = await responsesTarget(
      request,
      { session: sessionIdFromHeader(c.req.header("x-ctxkit-session")), mode: c.req.header("x-ctxkit-mode") },
      (sessionId) => context.directory.find(c.get("tenant"), sessionId),
    );
    if (target.kind === "stateless") return stateless(c, context, upstream, request, started);
    const wire = responsesWire(c, context, request, upstream, target);
    return serveProxyTurn(c, context, { sessionId: target.id, started }, wire);
  });
}

async function stateless(
  c: Context<ServerEnv>,
  context: ServerContext,
  upstream: UpstreamOptions,
  request: ResponsesRequest,
  started: number,
): Promise<Response> {
  const engine = await context.engines.engine(c.get("tenant"));
  const messages = responsesMessages(request.input, request.instructions);
  const governed = await governStateless(
    context.stateless,
    `${c.get("tenant")} responses`,
    messages,
    engine.settings,
    responsesToolDefinitions(request.tools),
    (event) => context.metrics.governanceEvents.inc({ type: event.type }),
  );
  const body = responsesUpstreamBody(
    request,
    responsesInput(governed.view, request.instructions),
    upstream.model,
  );
  return forwardStateless(
    c,
    context,
    { upstream, body, path: "responses", stream: request.stream === true, started },
    { "X-Ctxkit-Tokens": String(governed.tokens.total), "X-Ctxkit-Checkpoint": String(governed.checkpoint) },
  );
}

/**
 * The Responses wire: the request's new input (after `previous_response_id`, from the session's latest response
 * only), the upstream body around the governed view, the reply stored and answered under its own id.
 */
function responsesWire(
  c: Context<ServerEnv>,
  context: ServerContext,
  request: ResponsesRequest,
  upstream: UpstreamOptions,
  target: Extract<ResponsesTarget, { kind: "session" }>,
): ProxyWire {
  const id = responseId(target.id);
  // The reply keeps the id it is answered under: what recognises the session's latest response.
  const stored = (reply: AssistantReply) => ({
    ...reply,
    metadata: { ...reply.metadata, [RESPONSE_ID_KEY]: id },
  });
  return {
    upstream,
    provider: "openai-compatible",
    path: "responses",
    tools: responsesToolDefinitions(request.tools),
    async inputs(session, storeId) {
      if (target.previous !== undefined) {
        await requireLatestResponse(session, target.previous, () =>
          context.store.loadMessages(storeId, { strategy: "all" }),
        );
      }
      const client = responsesMessages(request.input, request.instructions, storeId);
      const system = client.filter((message) => message.role === "system");
      const conversation = client.filter((message) => message.role !== "system");
      // After previous_response_id the input holds only new items (the API's contract); without it a client may
      // resend the whole conversation, and what the session holds is skipped.
      const fresh =
        target.previous !== undefined ? conversation : newMessages(conversation, await session.history());
      return clientTurn([...system, ...fresh]);
    },
    body: async (prepared) =>
      responsesUpstreamBody(
        { ...request, instructions: null },
        {
          ...(prepared.system !== "" && { instructions: prepared.system }),
          input: toOpenAIResponses(await inlineMedia(prepared.messages, context.store.blobs)),
        },
        upstream.model,
      ),
    async respond({ call, headers }, ending) {
      if (request.stream !== true) {
        const answer = upstreamJson(await call.text(), true) as Record<string, unknown>;
        await ending.complete(stored(replyFromResponse(answer)));
        return c.json({ ...answer, id }, 200, headers);
      }
      const body = relayResponsesStream({
        upstream: call,
        responseId: id,
        complete: (reply) => ending.complete(stored(reply)),
        fail: ending.fail,
        errorObject: (reason) => {
          const { code, message } = ending.answer(reason);
          return { code, message };
        },
      });
      return eventStream(body, headers);
    },
  };
}
