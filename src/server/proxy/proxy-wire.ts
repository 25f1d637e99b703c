import type { EngineSession } from "../../engine/engine-session.ts";
import type { PreparedRequest, ToolDefinition } from "../../engine/prepared-request.ts";
import type { GovernanceEvent } from "../../governance/events.ts";
import type { Message } from "../../model/message.ts";
import type { SessionRecord } from "../../store/session-store.ts";
import type { ErrorAnswer } from "../http/error-response.ts";
import { HttpError } from "../http/http-error.ts";
import type { AssistantReply } from "../upstream/assistant-reply.ts";
import type { UpstreamResponse } from "../upstream/call-upstream.ts";
import type { UpstreamOptions } from "../upstream/upstream-options.ts";
import type { ClientTurn } from "./session-inputs.ts";

/**
 * How a wire ends the turn it answers: `complete` stores the reply, `fail` says it failed first. A relayed stream
 * hands them to its relay (with `answer` for its error event).
 */
export interface TurnEnding {
  /**
   * Stores the reply; resolves with what was stored once the turn is committed and its session released, rejects
   * when storing failed (nothing is stored).
   */
  readonly complete: (reply: AssistantReply) => Promise<StoredTurn>;
  /** The answer failed before its reply was stored: nothing of the turn is stored. */
  readonly fail: (reason: unknown) => void;
  /** What a failure is answered with (logged when its details are hidden from the client). */
  readonly answer: (reason: unknown) => ErrorAnswer;
}

/** What a turn stored: the reply's message, and the session's record after the commit. */
export interface StoredTurn {
  readonly message: Message;
  readonly session: SessionRecord | undefined;
}

/** The upstream's answer to a turn's request, for the wire to answer the client with. */
export interface UpstreamAnswer {
  readonly call: UpstreamResponse;
  /** The answer's headers: the session's, what governance did, the wire's own. */
  readonly headers: Record<string, string>;
  /** The governance events of the request, an overflow recovery's included. */
  readonly events: readonly GovernanceEvent[];
}

/**
 * One API's wire format, as a stateful proxy turn serves it (one per request: it holds the client's request).
 * `serveProxyTurn` owns the session and the turn; the wire only translates.
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
  /**
   * The request's new messages for the leased session (read against its history); undefined when the request
   * is another conversation than the session's, served by `elsewhere` with nothing stored.
   */
  inputs(session: EngineSession, storeId: string): Promise<ClientTurn | undefined>;
  /** Serves a request `inputs` found to be another conversation, once the session is released. */
  elsewhere?(): Promise<Response>;
  /**
   * The upstream body around the governed request, media put back inline (the upstream cannot read `blob:`
   * references); sent as `bodyChunks` writes it.
   */
  body(prepared: PreparedRequest): Promise<unknown>;
  /**
   * The client's answer, the reply stored through `ending.complete` first: a whole answer's before it is sent, a
   * stream's before its last event. A rejection before `complete` fails the turn (a 2xx body that reports an
   * error is thrown as the upstream failure it is); a stream's later failure goes to `ending.fail`.
   */
  respond(answer: UpstreamAnswer, ending: TurnEnding): Promise<Response>;
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
