/**
 * The JSON shapes of the server API the inspector reads (docs/server-api.md): the server's own zod schemas
 * (src/server/api-schemas.ts), inferred there and imported here type-only — nothing of `ctxkit/server` reaches the
 * browser.
 */
import type {
  ChannelsJson,
  ContextJson,
  GovernanceEventJson,
  MessageJson,
  MissingSpanJson,
  RequestPayloadJson,
  SessionJson,
  SessionListJson,
  TimelineJson,
  TimelineRequestJson,
} from "ctxkit/server";

/** A stored session as the API returns it. */
export type Session = SessionJson;
/** A page of sessions, or search results with their hits. */
export type SessionList = SessionListJson;
/** A message of the ctxkit model. */
export type Message = MessageJson;
/** One content block of a message. */
export type ContentBlock = Message["content"][number];
/** Tokens of a payload by channel. */
export type Channels = ChannelsJson;
/** A governance event (type-specific fields are shown as they come). */
export type GovernanceEvent = GovernanceEventJson;
/** A span a request's recorded reply used that its governed view lacked, and the message that held it. */
export type MissingSpan = MissingSpanJson;
/** One request of a session's timeline. */
export type TimelineRequest = TimelineRequestJson;
/** `GET /v1/sessions/:id/timeline`. */
export type Timeline = TimelineJson;
/** `GET /v1/sessions/:id/timeline/:index`. */
export type RequestPayload = RequestPayloadJson;
/** `GET /v1/sessions/:id/context`. */
export type ContextAnswer = ContextJson;
