import type { Context, Hono } from "hono";
import { CtxkitError } from "../../errors/ctxkit-error.ts";
import {
  anthropicAnchors,
  ephemeralTail,
  fromAnthropic,
  toAnthropic,
  type AnthropicTextBlock,
} from "../../formats/providers/anthropic/index.ts";
import type { Message } from "../../model/message.ts";
import { inlineMedia } from "../../store/media-blobs.ts";
import { textTokensAsync } from "../../tokens/token-counter.ts";
import { anthropicErrorBody } from "../http/error-response.ts";
import { HttpError } from "../http/http-error.ts";
import { readJson } from "../http/json-body.ts";
import { requestedSession, sessionHeaderValue } from "../http/session-header.ts";
import {
  governedAnthropicMessages,
  splitOpeningSystem,
  withCompletedBreakpoints,
  withOpeningSystem,
} from "../proxy/anthropic-payload.ts";
import { replyFromAnthropic } from "../proxy/anthropic-reply.ts";
import {
  anthropicHeaders,
  anthropicRequestSchema,
  anthropicToolDefinitions,
  type AnthropicRequest,
} from "../proxy/anthropic-request.ts";
import { ClientStyles, continuation } from "../proxy/conversation-continuation.ts";
import { forwardStateless } from "../proxy/forward-stateless.ts";
import { relayAnthropicStream } from "../proxy/relay-anthropic-stream.ts";
import { eventStream, upstreamJson, type ProxyWire } from "../proxy/proxy-wire.ts";
import { serveProxyTurn } from "../proxy/serve-proxy-turn.ts";
import { clientTurn } from "../proxy/session-inputs.ts";
import type { ServerContext, ServerEnv } from "../server-context.ts";
import { callUpstream } from "../upstream/call-upstream.ts";
import type { UpstreamOptions } from "../upstream/upstream-options.ts";

function requireAnthropicUpstream(context: ServerContext): UpstreamOptions {
  if (context.anthropicUpstream === undefined) {
    throw new HttpError(
      503,
      "not_configured",
      "this server has no Anthropic upstream; start it with ANTHROPIC_API_KEY set (or --anthropic-upstream <base-url>)",
    );
  }
  // The session id goes upstream as OpenAI's prompt_cache_key only; Anthropic refuses unknown fields.
  return {
    ...context.anthropicUpstream,
    auth: context.anthropicUpstream.auth ?? "x-api-key",
    promptCacheKey: false,
  };
}

const systemBlocks = (system: AnthropicRequest["system"]): AnthropicTextBlock[] =>
  system === undefined
    ? []
    : typeof system === "string"
      ? [{ type: "text", text: system }]
      : (system as AnthropicTextBlock[]);

/** The endpoint under the upstream's base URL, with the client's query (Claude Code sends `?beta=true`). */
function upstreamPath(c: Context<ServerEnv>, path: string): string {
  const query = new URL(c.req.url).search;
  return `${path}${query}`;
}

/** What a stateless Messages request becomes: the body to send, and what governance did. */
interface GovernedBody {
  readonly body: Record<string, unknown>;
  readonly tokens: number | undefined;
  readonly checkpoint: boolean;
  /** False when the history holds blocks ctxkit cannot represent: it is forwarded as it came. */
  readonly governed: boolean;
}

/**
 * Governs a client's whole history through the server's stateless core, keeping what the client sent where
 * governance left it: system prompt and tools untouched, the unchanged newest messages byte for byte, and the
 * prompt-cache breakpoints completed (never more than four).
 */
async function governStatelessBody(
  c: Context<ServerEnv>,
  context: ServerContext,
  request: AnthropicRequest,
  model: string,
): Promise<GovernedBody> {
  const tenant = c.get("tenant");
  const { opening, rest } = splitOpeningSystem(request.messages);
  let history: Message[];
  try {
    history = fromAnthropic({ messages: rest });
    fromAnthropic({ messages: opening });
  } catch (error) {
    if (!CtxkitError.isInstance(error)) throw error;
    // A block ctxkit does not model (a new server tool's, say) must not break the client's agent.
    context.log(`ungoverned ${c.get("requestId")}: ${error.message.slice(0, 300)}`);
    return { body: { ...request, model }, tokens: undefined, checkpoint: false, governed: false };
  }
  const engine = await context.engines.engine(tenant);
  const { settings } = engine;
  const fixedParts = [request.system ?? null, request.tools ?? null, opening];
  const fixedTokens = await textTokensAsync(JSON.stringify(fixedParts), settings.counter);
  const governed = await context.stateless.govern(
    { scope: `${tenant} messages ${model}`, fixed: JSON.stringify(fixedParts), fixedTokens, history },
    settings,
    (event) => context.metrics.governanceEvents.inc({ type: event.type }),
  );
  const { messages, anchors } = withOpeningSystem(governedAnthropicMessages(rest, governed), opening);
  return {
    body: withCompletedBreakpoints(
      { ...request, model, messages },
      { model, ephemeralBlocks: ephemeralBlocksOf(governed.messages), anchors },
    ),
    tokens: governed.tokens.total,
    checkpoint: governed.checkpoint,
    governed: true,
  };
}

/**
 * `POST /v1/messages` and `POST /v1/messages/count_tokens`: the Anthropic Messages proxy, for Claude Code and
 * any Anthropic SDK client. Without `X-Ctxkit-Session` a request is stateless: the client's whole history is
 * governed by the server's stateless core (the same history always gets the same payload, a history that only
 * grew keeps its cached prefix until a checkpoint pays), nothing is stored, and the upstream's answer — JSON or
 * Anthropic's SSE events — goes back untouched. With `X-Ctxkit-Session` the new messages are stored in that
 * session (a client that resends the whole conversation has the part the session holds skipped), the session is
 * governed and the reply recorded; mid-conversation system messages join the system prompt there. System
 * prompt, tool definitions, thinking blocks and their signatures, and every field ctxkit does not read go
 * upstream as the client sent them. A request on a session that is not its continuation (`continuation`: a
 * Claude Code subagent's or side request, which carry the same header; a history that branched off the session,
 * such as Claude Code's `/compact` summary request) is served statelessly, and nothing is stored
 * (`X-Ctxkit-Stored: false`). Errors have Anthropic's shape.
 *
 * @example
 * registerMessagesRoutes(app, context);
 */
export function registerMessagesRoutes(app: Hono<ServerEnv>, context: ServerContext): void {
  const styles = new ClientStyles();
  app.post("/v1/messages", async (c) => {
    const started = performance.now();
    const upstream = requireAnthropicUpstream(context);
    const request = await readJson(c, anthropicRequestSchema, "messages request");
    const sessionId = requestedSession((name) => c.req.header(name));
    if (sessionId === undefined) return stateless(c, context, upstream, request, started);
    const turn = { sessionId, started };
    return serveProxyTurn(c, context, turn, messagesWire(c, context, request, upstream, turn, styles));
  });

  app.post("/v1/messages/count_tokens", async (c) => {
    const upstream = requireAnthropicUpstream(context);
    const request = await readJson(c, anthropicRequestSchema, "count_tokens request");
    const model = upstream.model ?? request.model;
    const { body } = await governStatelessBody(c, context, request, model);
    const { stream: _stream, max_tokens: _max, ...countable } = body;
    const call = await callUpstream(upstream, countable, {
      timeoutMs: c.get("limits").upstreamTimeoutMs,
      signal: c.req.raw.signal,
      path: upstreamPath(c, "messages/count_tokens"),
      headers: anthropicHeaders((name) => c.req.header(name)),
    });
    return new Response(await call.text(), {
      status: call.status,
      headers: { "Content-Type": call.contentType ?? "application/json" },
    });
  });
}

async function stateless(
  c: Context<ServerEnv>,
  context: ServerContext,
  upstream: UpstreamOptions,
  request: AnthropicRequest,
  started: number,
  extraHeaders: Record<string, string> = {},
): Promise<Response> {
  const governed = await governStatelessBody(c, context, request, upstream.model ?? request.model);
  return forwardStateless(
    c,
    context,
    {
      upstream,
      body: governed.body,
      path: upstreamPath(c, "messages"),
      headers: anthropicHeaders((name) => c.req.header(name)),
      stream: request.stream === true,
      started,
    },
    {
      ...extraHeaders,
      "X-Ctxkit-Governed": String(governed.governed),
      "X-Ctxkit-Checkpoint": String(governed.checkpoint),
      ...(governed.tokens !== undefined && { "X-Ctxkit-Tokens": String(governed.tokens) }),
    },
  );
}

/**
 * The Messages wire: the client's messages the session does not hold (a request that does not continue the
 * session is served statelessly, `X-Ctxkit-Stored: false`), the upstream body around the governed view with the
 * client's system blocks and cache breakpoints, Anthropic's events relayed.
 */
function messagesWire(
  c: Context<ServerEnv>,
  context: ServerContext,
  request: AnthropicRequest,
  upstream: UpstreamOptions,
  { sessionId, started }: { readonly sessionId: string; readonly started: number },
  styles: ClientStyles,
): ProxyWire {
  const model = upstream.model ?? request.model;
  let system: AnthropicTextBlock[] = [];
  let clientSystem: string | undefined;
  return {
    upstream,
    provider: "anthropic",
    path: upstreamPath(c, "messages"),
    upstreamHeaders: anthropicHeaders((name) => c.req.header(name)),
    answerHeaders: { "X-Ctxkit-Stored": "true" },
    tools: anthropicToolDefinitions(request.tools),
    async inputs(session, storeId) {
      const client = fromAnthropic({ messages: request.messages }, { sessionId: storeId });
      // Mid-conversation system messages are not stored: they join the system prompt, after the client's own.
      const inline = client.filter((message) => message.role === "system");
      const match = continuation(
        client.filter((message) => message.role !== "system"),
        await session.history(),
        styles.get(storeId),
      );
      if (match.style !== undefined) styles.set(storeId, match.style);
      if (!match.continues) return undefined;
      system = [
        ...systemBlocks(request.system),
        ...inline.flatMap((message) =>
          message.content.flatMap((block) =>
            block.type === "text" ? [{ type: "text" as const, text: block.text }] : [],
          ),
        ),
      ];
      clientSystem = system.length === 0 ? undefined : system.map((block) => block.text).join("\n\n");
      // Resuming a paused reply adds no message: the session goes upstream with that reply last, and Anthropic
      // continues it; the continuation is stored as a further reply of the same turn.
      return { ...(match.resumes ? { inputs: [] } : clientTurn(match.fresh)), system: clientSystem };
    },
    async elsewhere() {
      // Another conversation on this session's header (a subagent's, a side request): governed on its own.
      context.log(`not stored ${c.get("requestId")}: another conversation than its session's`);
      return stateless(c, context, upstream, request, started, {
        "X-Ctxkit-Session": sessionHeaderValue(sessionId),
        "X-Ctxkit-Stored": "false",
      });
    },
    async body(prepared) {
      const view = await inlineMedia(prepared.messages, context.store.blobs);
      const { messages } = toAnthropic(view);
      // The client's blocks as sent (their markers kept), then what ctxkit's assembly added (core memories).
      const added = prepared.system.startsWith(clientSystem ?? "")
        ? prepared.system.slice((clientSystem ?? "").length).trim()
        : "";
      const sent = [...system, ...(added === "" ? [] : [{ type: "text" as const, text: added }])];
      return withCompletedBreakpoints(
        { ...request, model, ...(sent.length > 0 && { system: sent }), messages },
        {
          model,
          ephemeralBlocks: ephemeralBlocksOf(prepared.messages),
          anchors: anthropicAnchors(view, prepared.cacheAnchors, messages),
        },
      );
    },
    async respond({ call, headers }, ending) {
      if (request.stream !== true) {
        const text = await call.text();
        await ending.complete(replyFromAnthropic(upstreamJson(text)));
        return new Response(text, {
          status: 200,
          headers: { ...headers, "Content-Type": "application/json" },
        });
      }
      const body = relayAnthropicStream({
        upstream: call,
        ...ending,
        errorObject: (reason) => anthropicErrorBody(ending.answer(reason)).error,
      });
      return eventStream(body, headers);
    },
  };
}

/** Blocks of the notices at the end of a view: they exist in this request only, so no breakpoint goes there. */
function ephemeralBlocksOf(messages: readonly Message[]): number {
  return messages
    .slice(messages.length - ephemeralTail(messages))
    .reduce((blocks, message) => blocks + message.content.length, 0);
}
