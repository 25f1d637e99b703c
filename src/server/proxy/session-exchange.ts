import type { PreparedRequest, ToolDefinition } from "../../engine/prepared-request.ts";
import { toOpenAIChat, type OpenAIChatMessage } from "../../formats/providers/openai-chat/index.ts";
import type { GovernanceEvent } from "../../governance/events.ts";
import type { Message } from "../../model/message.ts";
import { inlineMedia } from "../../store/media-blobs.ts";
import { textTokensAsync } from "../../tokens/token-counter.ts";
import type { BlobStore } from "../../store/blob-store.ts";
import type { SessionRecord } from "../../store/session-store.ts";
import { HttpError } from "../http/http-error.ts";
import type { SessionLease } from "../tenancy/tenant-engines.ts";
import type { AssistantReply } from "../upstream/assistant-reply.ts";
import { callUpstream, type UpstreamResponse } from "../upstream/call-upstream.ts";
import type { UpstreamOptions } from "../upstream/upstream-options.ts";
import { withPromptCacheKey } from "./chat-request.ts";
import { appendInputs, clientSystemPrompt, type ClientTurn } from "./session-inputs.ts";

/** Options of `openExchange`. */
export interface ExchangeOptions {
  readonly lease: SessionLease;
  readonly blobs: BlobStore;
  readonly turn: ClientTurn;
  /** Tool definitions of the request, for the token budget. */
  readonly tools: readonly ToolDefinition[];
  readonly upstream: UpstreamOptions;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /**
   * The upstream body around the governed messages (as chat messages; a body in another format builds its own
   * from the prepared request, and may be async).
   */
  readonly body: (messages: OpenAIChatMessage[], prepared: PreparedRequest) => unknown;
  /** The upstream endpoint under its base URL. Default `chat/completions`. */
  readonly path?: string;
  /** Headers of the upstream request (e.g. the client's `anthropic-version`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The provider recorded on the reply: the upstream's (`anthropic` for the Messages API). */
  readonly provider: string;
  /** Called with each upstream attempt's outcome, for metrics. */
  readonly onUpstream?: (outcome: string) => void;
}

/** What `OpenExchange.complete` stored. */
export interface CompletedTurn {
  readonly message: Message;
  /** The session's record as the commit stored it. */
  readonly session: SessionRecord | undefined;
}

/** A request sent upstream whose answer is being read; the session stays leased until it completes or fails. */
export interface OpenExchange {
  readonly prepared: PreparedRequest;
  /** Governance events of this request, an overflow recovery's included. */
  readonly events: readonly GovernanceEvent[];
  readonly upstream: UpstreamResponse;
  /** Milliseconds spent in the upstream call until its headers (every attempt). */
  readonly upstreamHeadersMs: number;
  /**
   * Records the reply and commits the request's messages with it, in one transaction; resolves with the reply's
   * message and the session as stored.
   */
  complete(reply: AssistantReply): Promise<CompletedTurn>;
}

/**
 * The OpenAI chat messages of a prepared request, system prompt first, with media kept in the blob store put
 * back inline (the upstream cannot read `blob:` references). The reasoning of assistant messages that made tool
 * calls goes back as `reasoning_content` (DeepSeek's thinking mode answers 400 without it), unless the upstream
 * has `reasoningContent: false`; other reasoning is left out (servers ignore it, or reject it).
 *
 * @example
 * const messages = await upstreamMessages(prepared, store.blobs, upstream);
 */
export async function upstreamMessages(
  prepared: PreparedRequest,
  blobs: BlobStore,
  upstream: Pick<UpstreamOptions, "reasoningContent"> = {},
): Promise<OpenAIChatMessage[]> {
  const messages = toOpenAIChat(await inlineMedia(prepared.messages, blobs), {
    reasoning: upstream.reasoningContent === false ? "omit" : "tool-calls",
  });
  return prepared.system === "" ? messages : [{ role: "system", content: prepared.system }, ...messages];
}

/**
 * Opens a turn of a leased session with a client's new messages, and sends the governed history upstream
 * (`SessionTurn.send`: an upstream "context length exceeded" trims the governed view and retries, then clears it
 * and retries once more; a third one is a 400 `context_overflow`).
 * On any failure, of the exchange or of its `complete`, the caller discards the lease (the session reloads from
 * the store), so nothing of the request remains.
 *
 * @example
 * const exchange = await openExchange({ lease, blobs, turn, tools, upstream, timeoutMs, body, provider: "openai" });
 * const reply = replyFromCompletion(JSON.parse(await exchange.upstream.text()));
 * await exchange.complete(reply);
 */
export async function openExchange(options: ExchangeOptions): Promise<OpenExchange> {
  const { lease } = options;
  const session = lease.session;
  const turn = await session.begin();
  await appendInputs(session, options.turn.inputs);
  const system = options.turn.system ?? lease.memo.system;
  if (options.turn.system !== undefined) lease.memo.system = options.turn.system;
  // The session counts the system prompt and tool definitions synchronously; counting them here first lets
  // the event loop run while a huge one is counted, and leaves the count remembered for the session.
  const counter = lease.engine.settings.counter;
  if (system !== undefined) await textTokensAsync(system.trim(), counter);
  if (options.tools.length > 0) await textTokensAsync(JSON.stringify(options.tools), counter);
  let headersMs = 0;
  const sent = await turn.send(
    async (request, signal) => {
      const messages = await upstreamMessages(request, options.blobs, options.upstream);
      const body = withPromptCacheKey(await options.body(messages, request), session.id, options.upstream);
      try {
        const response = await callUpstream(options.upstream, body, {
          timeoutMs: options.timeoutMs,
          signal,
          ...(options.path !== undefined && { path: options.path }),
          ...(options.headers !== undefined && { headers: options.headers }),
        });
        headersMs += response.headersMs;
        options.onUpstream?.(String(response.status));
        lease.memo.lastRequest = { prepared: request, at: new Date().toISOString() };
        return response;
      } catch (error) {
        options.onUpstream?.(error instanceof HttpError ? error.code : "error");
        throw error;
      }
    },
    {
      ...clientSystemPrompt(system),
      tools: options.tools,
      // Media are read back from the blob store when the request is sent (`upstreamMessages`), and the request
      // kept for the inspector holds their references, not their data.
      media: "ref",
      ...(options.signal !== undefined && { signal: options.signal }),
    },
  );
  return {
    prepared: sent.request,
    events: sent.events,
    upstream: sent.response,
    upstreamHeadersMs: headersMs,
    complete: async (reply) => {
      const committed = await turn.commit({
        content: reply.content,
        provider: options.provider,
        ...(reply.model !== undefined && { model: reply.model }),
        ...(reply.usage !== undefined && { usage: reply.usage }),
        ...(reply.finishReason !== undefined && { finishReason: reply.finishReason }),
        ...(reply.metadata !== undefined && { metadata: reply.metadata }),
      });
      return { message: committed.reply!, session: committed.session };
    },
  };
}
