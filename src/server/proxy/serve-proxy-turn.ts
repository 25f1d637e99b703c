import type { Context } from "hono";
import { textTokensAsync } from "../../tokens/token-counter.ts";
import { errorAnswer, logHidden } from "../http/error-response.ts";
import { HttpError } from "../http/http-error.ts";
import { sessionHeaderValue } from "../http/session-header.ts";
import { commitFollowUp } from "../routes/turn-support.ts";
import type { ServerContext, ServerEnv } from "../server-context.ts";
import type { SessionLease } from "../tenancy/tenant-engines.ts";
import type { AssistantReply } from "../upstream/assistant-reply.ts";
import { callUpstream, type UpstreamResponse } from "../upstream/call-upstream.ts";
import { withPromptCacheKey } from "./chat-request.ts";
import type { ProxyWire, StoredTurn, TurnEnding } from "./proxy-wire.ts";
import { appendInputs, clientSystemPrompt, type ClientTurn } from "./session-inputs.ts";

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
 * Opens a turn of the leased session with the client's new messages and sends the governed history upstream
 * through the wire (`SessionTurn.send`: an upstream "context length exceeded" trims the governed view and
 * retries, then clears it and retries once more; a third one is a 400 `context_overflow`).
 */
async function sendTurn(
  c: Context<ServerEnv>,
  context: ServerContext,
  lease: SessionLease,
  inputs: ClientTurn,
  wire: ProxyWire,
) {
  const { session, memo } = lease;
  const turn = await session.begin();
  await appendInputs(session, inputs.inputs);
  const system = inputs.system ?? memo.system;
  if (inputs.system !== undefined) memo.system = inputs.system;
  // The session counts the system prompt and tool definitions synchronously; counting them here first lets
  // the event loop run while a huge one is counted, and leaves the count remembered for the session.
  const counter = lease.engine.settings.counter;
  if (system !== undefined) await textTokensAsync(system.trim(), counter);
  if (wire.tools.length > 0) await textTokensAsync(JSON.stringify(wire.tools), counter);
  let headersMs = 0;
  const sent = await turn.send<UpstreamResponse>(
    async (request, signal) => {
      const body = withPromptCacheKey(await wire.body(request), session.id, wire.upstream);
      try {
        const response = await callUpstream(wire.upstream, body, {
          timeoutMs: c.get("limits").upstreamTimeoutMs,
          signal,
          ...(wire.path !== undefined && { path: wire.path }),
          ...(wire.upstreamHeaders !== undefined && { headers: wire.upstreamHeaders }),
        });
        headersMs += response.headersMs;
        context.metrics.upstreamRequests.inc({ status: String(response.status) });
        memo.lastRequest = { prepared: request, at: new Date().toISOString() };
        return response;
      } catch (error) {
        context.metrics.upstreamRequests.inc({ status: error instanceof HttpError ? error.code : "error" });
        throw error;
      }
    },
    {
      ...clientSystemPrompt(system),
      tools: wire.tools,
      // Media are read back from the blob store when the wire makes the body (`ProxyWire.body`), and the request
      // kept for the inspector holds their references, not their data.
      media: "ref",
      signal: c.req.raw.signal,
    },
  );
  return { turn, sent, headersMs: () => headersMs };
}

/**
 * One stateful proxy turn, whatever the API: claims the session named `sessionId`, leases it, opens a turn with
 * the request's new messages, sends the governed history upstream (recovering from an overflow), and stores the
 * reply, recorded with the upstream's provider, when the wire has read it (`ProxyWire.respond`). The session is
 * released in one place, when the turn ends: stored, failed (nothing of it stored: the session reloads from the
 * store), or not the session's conversation at all. An error before the wire answers is thrown (the route's error
 * shape answers it).
 *
 * @example
 * return serveProxyTurn(c, context, { sessionId, started }, chatWire(request, upstream));
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
  // Resolves with what was stored, or undefined when the request was not the session's; settles after release.
  const lifetime = (async (): Promise<StoredTurn | undefined> => {
    let lease;
    let opened = false;
    let stored = false;
    try {
      lease = await context.engines.lease(tenant, claim.storeId);
      const inputs = await wire.inputs(lease.session, claim.storeId);
      if (inputs === undefined) return undefined;
      opened = true;
      const { turn, sent, headersMs } = await sendTurn(c, context, lease, inputs, wire);
      const call = sent.response;
      const headers = {
        ...wire.answerHeaders,
        "X-Ctxkit-Session": sessionHeaderValue(sessionId),
        "X-Ctxkit-Tokens": String(sent.request.tokens.total),
        "X-Ctxkit-Checkpoint": String(sent.request.checkpoint),
      };
      const replied = resolvers<AssistantReply>();
      const ending: TurnEnding = {
        complete: async (reply) => {
          replied.resolve(reply);
          return (await lifetime)!;
        },
        fail: (reason) => replied.reject(reason),
        answer: (reason) => {
          const answer = errorAnswer(reason);
          logHidden(context.log, c.get("requestId"), answer);
          return answer;
        },
      };
      wire.respond({ call, headers, events: sent.events }, ending).then(served.resolve, (error: unknown) => {
        replied.reject(error);
        served.reject(error);
      });
      const reply = await replied.promise;
      const committed = await turn.commit({
        content: reply.content,
        provider: wire.upstream.provider ?? wire.provider,
        ...(reply.model !== undefined && { model: reply.model }),
        ...(reply.usage !== undefined && { usage: reply.usage }),
        ...(reply.finishReason !== undefined && { finishReason: reply.finishReason }),
        ...(reply.metadata !== undefined && { metadata: reply.metadata }),
      });
      const record = await commitFollowUp(context, tenant, claim, committed.session);
      stored = true;
      const upstreamMs = headersMs() + call.bodyMs();
      context.metrics.upstreamDuration.observe({}, upstreamMs / 1000);
      context.metrics.proxyOverhead.observe({}, (performance.now() - started - upstreamMs) / 1000);
      return { message: committed.reply!, session: record };
    } finally {
      if (opened && !stored) lease?.discard();
      lease?.release();
      claim.release();
    }
  })();
  lifetime.then(
    (stored) => {
      if (stored === undefined) served.resolve(wire.elsewhere!());
    },
    // Once the wire answers, its answer is the client's (this rejection then changes nothing).
    (error: unknown) => served.reject(error),
  );
  return served.promise;
}
