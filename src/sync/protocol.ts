import { z } from "zod";
import { ParseError } from "../errors/errors.ts";
import { jsonValueSchema, validate } from "../model/schemas.ts";
import { ledgerEntrySchema } from "./ledger-entry.ts";
import { toolCallRecordSchema } from "./tool-summary.ts";

/**
 * The sync protocol between a client (a chat front end) and a sync server that runs the conversation agent and
 * the executors. JSON messages with a `type`; field names in snake_case as on Contop's data channel.
 */

/** The WebSocket subprotocol of the sync protocol; a sync endpoint selects it when a client offers it. */
export const SYNC_SUBPROTOCOL = "ctxkit.sync";

/**
 * Prefix of a subprotocol that carries an API key (`ctxkit.key.<key>`), for browsers, which cannot set an
 * `Authorization` header on a WebSocket. A client offering one should also offer `SYNC_SUBPROTOCOL`, so the
 * server selects that and never echoes the key back.
 */
export const KEY_SUBPROTOCOL_PREFIX = "ctxkit.key.";

const id = z.string().min(1).max(200);
const text = z.string().max(1_000_000);

/** Resume a session (after connecting or reconnecting): the server reloads its ledger and executor sessions. */
export const sessionContextSchema = z.object({
  type: z.literal("session_context"),
  session_id: id,
  /** The executor session ids the client knows, by agent (used when the server has none stored). */
  executor_session_ids: z.record(id, id).optional(),
  /** The conversation as the client knows it (used when the server has no stored state for the session). */
  backstory: z.array(ledgerEntrySchema).max(10_000).optional(),
});

/** Start over: the server resets the ledger, the cursors and the executor sessions of `session_id`. */
export const newSessionSchema = z.object({ type: z.literal("new_session"), session_id: id });

/** A message for the conversation agent; it answers, or asks for an executor with tool calls. */
export const conversationRequestSchema = z.object({
  type: z.literal("conversation_request"),
  request_id: id,
  text,
});

/** Work for an executor. Without `conversation_context`, the server builds it from the ledger. */
export const userIntentSchema = z.object({
  type: z.literal("user_intent"),
  request_id: id,
  text,
  agent: id.optional(),
  conversation_context: text.optional(),
});

/** Any message a client sends. */
export const clientMessageSchema = z.discriminatedUnion("type", [
  sessionContextSchema,
  newSessionSchema,
  conversationRequestSchema,
  userIntentSchema,
]);

/** A tool call of the conversation agent: "this needs an executor". */
export const conversationToolCallSchema = z.object({ id, name: id, input: jsonValueSchema });

/** Any message a server sends. */
export const serverMessageSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("session_ready"),
    session_id: id,
    executor_session_ids: z.record(id, id),
    /** Absolute end of the ledger. */
    ledger_end: z.number().int().nonnegative(),
    /** True when the server already knew the session (in memory or stored). */
    restored: z.boolean(),
    /** Requests of this session still running; a client's other unanswered requests were lost. */
    in_flight: z.array(id),
  }),
  z.object({ type: z.literal("conversation_delta"), request_id: id, delta: z.string() }),
  z.object({
    type: z.literal("conversation_response"),
    request_id: id,
    text: z.string(),
    tool_calls: z.array(conversationToolCallSchema),
    /** When there are tool calls: the agent the server would route the request to. */
    route: id.optional(),
  }),
  z.object({ type: z.literal("agent_delta"), request_id: id, delta: z.string() }),
  z.object({
    type: z.literal("agent_result"),
    request_id: id,
    agent: id,
    answer: z.string(),
    tool_summary: z.array(toolCallRecordSchema),
    session_id: id,
  }),
  z.object({ type: z.literal("error"), request_id: id.optional(), code: z.string(), message: z.string() }),
]);

export type SessionContextMessage = z.infer<typeof sessionContextSchema>;
export type NewSessionMessage = z.infer<typeof newSessionSchema>;
export type ConversationRequestMessage = z.infer<typeof conversationRequestSchema>;
export type UserIntentMessage = z.infer<typeof userIntentSchema>;
export type ClientMessage = z.infer<typeof clientMessageSchema>;
export type ServerMessage = z.infer<typeof serverMessageSchema>;
export type ConversationToolCall = z.infer<typeof conversationToolCallSchema>;
export type AgentResultMessage = Extract<ServerMessage, { type: "agent_result" }>;
export type SessionReadyMessage = Extract<ServerMessage, { type: "session_ready" }>;
export type ConversationResponseMessage = Extract<ServerMessage, { type: "conversation_response" }>;

function decode(raw: string, source: string): unknown {
  try {
    return JSON.parse(raw);
  } catch (error) {
    throw new ParseError(source, undefined, "one JSON object per message", "not valid JSON", {
      cause: error,
    });
  }
}

/**
 * Reads one client message (a JSON text frame) and validates it.
 *
 * @example
 * const message = decodeClientMessage('{"type":"new_session","session_id":"s1"}');
 */
export function decodeClientMessage(raw: string): ClientMessage {
  return validate(clientMessageSchema, decode(raw, "client message"), "client message");
}

/**
 * Reads one server message (a JSON text frame) and validates it.
 *
 * @example
 * const message = decodeServerMessage(event.data);
 * if (message.type === "agent_result") console.log(message.answer);
 */
export function decodeServerMessage(raw: string): ServerMessage {
  return validate(serverMessageSchema, decode(raw, "server message"), "server message");
}
