import type { Context, Hono } from "hono";
import type { PreparedRequest } from "../../engine/prepared-request.ts";
import { toOpenAIResponses } from "../../formats/providers/openai-responses/index.ts";
import { inlineMedia } from "../../store/media-blobs.ts";
import { errorAnswer, logHidden } from "../http/error-response.ts";
import { HttpError } from "../http/http-error.ts";
import { readJson } from "../http/json-body.ts";
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
import { openExchange } from "../proxy/session-exchange.ts";
import { clientTurn } from "../proxy/session-inputs.ts";
import type { ServerContext, ServerEnv } from "../server-context.ts";
import type { AssistantReply } from "../upstream/assistant-reply.ts";
import { callUpstream } from "../upstream/call-upstream.ts";
import type { UpstreamOptions } from "../upstream/upstream-options.ts";
import { commitFollowUp, requireUpstream } from "./turn-support.ts";
import { sessionHeaderValue, sessionIdFromHeader } from "../http/session-header.ts";

function parseJsonAnswer(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === "object" && value !== null && !Array.isArray(value))
      return value as Record<string, unknown>;
  } catch {
    // Answered below.
  }
  throw new HttpError(
    502,
    "upstream_error",
    "the upstream model server answered with something that is not JSON",
  );
}

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
    return stateful(c, context, upstream, request, target, started);
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
  let call;
  try {
    call = await callUpstream(upstream, body, {
      timeoutMs: c.get("limits").upstreamTimeoutMs,
      signal: c.req.raw.signal,
      path: "responses",
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
  const done = () =>
    context.metrics.proxyOverhead.observe(
      {},
      (performance.now() - started - call.headersMs - call.bodyMs()) / 1000,
    );
  if (request.stream === true) {
    // Nothing to record: the upstream's bytes go through untouched.
    const stream = call.stream(done);
    return new Response(stream, {
      status: call.status,
      headers: { ...headers, "Cache-Control": "no-cache" },
    });
  }
  const text = await call.text();
  done();
  return new Response(text, { status: call.status, headers });
}

async function stateful(
  c: Context<ServerEnv>,
  context: ServerContext,
  upstream: UpstreamOptions,
  request: ResponsesRequest,
  target: Extract<ResponsesTarget, { kind: "session" }>,
  started: number,
): Promise<Response> {
  const sessionId = target.id;
  const tenant = c.get("tenant");
  const claim = await context.directory.claim(tenant, sessionId);
  let lease;
  let exchange;
  let id: string;
  try {
    lease = await context.engines.lease(tenant, claim.storeId);
    if (target.previous !== undefined) {
      await requireLatestResponse(lease.session, target.previous, () =>
        context.store.loadMessages(claim.storeId, { strategy: "all" }),
      );
    }
    const client = responsesMessages(request.input, request.instructions, claim.storeId);
    const system = client.filter((message) => message.role === "system");
    const conversation = client.filter((message) => message.role !== "system");
    // After previous_response_id the input holds only new items (the API's contract); without it a client may
    // resend the whole conversation, and what the session holds is skipped.
    const fresh =
      target.previous !== undefined ? conversation : newMessages(conversation, await lease.session.history());
    const turn = clientTurn([...system, ...fresh]);
    const blobs = context.store.blobs;
    exchange = await openExchange({
      lease,
      blobs,
      turn,
      tools: responsesToolDefinitions(request.tools),
      upstream,
      provider: upstream.provider ?? "openai-compatible",
      timeoutMs: c.get("limits").upstreamTimeoutMs,
      signal: c.req.raw.signal,
      path: "responses",
      body: async (_chat, prepared: PreparedRequest) =>
        responsesUpstreamBody(
          { ...request, instructions: null },
          {
            ...(prepared.system !== "" && { instructions: prepared.system }),
            input: toOpenAIResponses(await inlineMedia(prepared.messages, blobs)),
          },
          upstream.model,
        ),
      onUpstream: (status) => context.metrics.upstreamRequests.inc({ status }),
    });
    id = responseId(sessionId);
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
    // The reply keeps the id it is answered under: what recognises the session's latest response.
    const { session: stored } = await exchange.complete({
      ...reply,
      metadata: { ...reply.metadata, [RESPONSE_ID_KEY]: id },
    });
    await commitFollowUp(context, tenant, claim, stored);
    const upstreamMs = exchange.upstreamHeadersMs + call.bodyMs();
    context.metrics.upstreamDuration.observe({}, upstreamMs / 1000);
    context.metrics.proxyOverhead.observe({}, (performance.now() - started - upstreamMs) / 1000);
  };
  const headers = {
    "X-Ctxkit-Session": sessionHeaderValue(sessionId),
    "X-Ctxkit-Tokens": String(prepared.tokens.total),
    "X-Ctxkit-Checkpoint": String(prepared.checkpoint),
  };
  if (request.stream === true) {
    const body = relayResponsesStream({
      upstream: call,
      responseId: id,
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
        return { code: answer.code, message: answer.message };
      },
    });
    return new Response(body, {
      status: 200,
      headers: { ...headers, "Content-Type": "text/event-stream", "Cache-Control": "no-cache" },
    });
  }
  try {
    const answer = parseJsonAnswer(await call.text());
    await complete(replyFromResponse(answer));
    return c.json({ ...answer, id }, 200, headers);
  } catch (error) {
    held.discard();
    throw error;
  } finally {
    end();
  }
}
