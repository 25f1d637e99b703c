/**
 * The JSON the server's read API answers with (docs/server-api.md), as zod schemas: sessions, messages, the
 * governed context and the inspector's timeline. Clients may validate answers with them; the web inspector derives
 * its types from them (`z.infer`, imported type-only from `ctxkit/server`), and a test checks the server's real
 * answers against them, so neither side's idea of the wire can drift from the other's.
 */
import { z } from "zod";
import { messageSchema } from "../model/schemas.ts";

const count = z.number();

/** Token usage totals of a session. */
export const usageTotalsJsonSchema = z.object({
  input: count,
  output: count,
  cacheRead: count,
  cacheWrite: count,
  reasoning: count,
});

/** A session as the API shows it (`GET /v1/sessions/:id`, and each of a list). */
export const sessionJsonSchema = z.object({
  id: z.string(),
  title: z.string().optional(),
  agent: z.string().optional(),
  parentId: z.string().optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
  messageCount: count,
  turnCount: count,
  usage: usageTotalsJsonSchema,
  cost: z.number(),
  /** False for a session reserved until its first turn. */
  stored: z.boolean(),
  origin: z.object({ format: z.string(), source: z.string() }).optional(),
});

/** `GET /v1/sessions`: a page of sessions, or search results with their hits (`?q=`). */
export const sessionListJsonSchema = z.object({
  sessions: z.array(sessionJsonSchema),
  nextCursor: z.string().optional(),
  hits: z.array(z.object({ sessionId: z.string(), seq: count.optional(), snippet: z.string() })).optional(),
});

/** `GET /v1/sessions/:id/messages`: stored messages, ids as the tenant knows them. */
export const messagesJsonSchema = z.object({ messages: z.array(messageSchema) });

/** Tokens of a payload by channel. */
export const channelsJsonSchema = z.object({
  system: z.array(z.object({ name: z.string(), tokens: count, truncated: z.boolean() })),
  summary: count,
  history: z.object({ user: count, assistant: count }),
  toolOutputs: count,
  currentInput: count,
  total: count,
});

/** A governance event: the fields every event has; the type-specific ones come as they are. */
export const governanceEventJsonSchema = z.looseObject({
  type: z.string(),
  tokensBefore: count,
  tokensAfter: count,
  messageIds: z.array(z.string()),
  refs: z.array(z.string()).optional(),
  reason: z.string().optional(),
});

/** A span a request's recorded reply used that its governed view lacked, and the message that held it. */
export const missingSpanJsonSchema = z.object({
  /** `anchor` (a line an edit replaced), `path`, `identifier` or `literal`. */
  kind: z.string(),
  text: z.string(),
  source: z.object({
    id: z.string(),
    seq: count,
    role: z.string(),
    /** What governance did to that message in this view. */
    fate: z.enum(["offloaded", "cut", "summarised", "removed"]),
    /** The payload message standing for it (itself, or the summary covering it). */
    viewMessageId: z.string().optional(),
  }),
});

/** Next-step grounding of one request. */
export const groundingJsonSchema = z.object({
  /** Share of the spans the reply copied from context still in view; absent when it copied none. */
  score: z.number().optional(),
  spans: count,
  kept: count,
  anchors: count,
  anchorsKept: count,
  missing: z.array(missingSpanJsonSchema),
  missingCount: count,
});

/** One request of a session's timeline. */
export const timelineRequestJsonSchema = z.object({
  index: count,
  replySeq: count,
  at: z.string(),
  raw: channelsJsonSchema,
  governed: channelsJsonSchema,
  cacheReadTokens: count,
  cacheWriteTokens: count,
  /** Input cost in units of the uncached input price. */
  costUnits: z.number(),
  rereadCostUnits: z.number(),
  /** Absent when governance refused the request. */
  grounding: groundingJsonSchema.optional(),
  checkpoint: z.boolean(),
  events: z.array(governanceEventJsonSchema),
  /** The refusal's error code, when governance refused to send the request. */
  error: z.string().optional(),
});

/** The prompt-cache model a timeline was priced with. */
export const cacheModelJsonSchema = z.object({
  provider: z.string(),
  model: z.string().optional(),
  read: z.number(),
  write: z.number(),
  output: z.number(),
  ttlSeconds: z.number(),
  /** Null when the provider caches prompts of any size. */
  minTokens: count.nullable(),
});

/** What the replay cost and kept (cost in units of the uncached input price). */
export const timelineTotalsJsonSchema = z.object({
  requests: count,
  inputTokens: count,
  cacheReadTokens: count,
  cacheWriteTokens: count,
  costUnits: z.number(),
  summaryCalls: count,
  summarizerCostUnits: z.number(),
  rereads: count,
  rereadCostUnits: z.number(),
  costWithRereads: z.number(),
  rawCostUnits: z.number(),
  grounding: z.number(),
  anchorsKept: z.number(),
  groundingWorst: z.object({ index: count, score: z.number() }).optional(),
});

/** `GET /v1/sessions/:id/timeline`: a replay of the stored history, request by request. */
export const timelineJsonSchema = z.object({
  sessionId: z.string(),
  contextWindow: count,
  usable: count,
  fixedTokens: count,
  model: z.string().optional(),
  settingsFrom: z.enum(["session", "recorded model", "server"]),
  cacheModel: cacheModelJsonSchema,
  totals: timelineTotalsJsonSchema,
  requests: z.array(timelineRequestJsonSchema),
});

/** `GET /v1/sessions/:id/timeline/:index`: one replayed request's governed payload. */
export const requestPayloadJsonSchema = z.object({
  request: timelineRequestJsonSchema,
  messages: z.array(messageSchema),
  /** The same payload as OpenAI chat messages. */
  openai: z.array(z.unknown()),
  summaries: z.array(z.object({ id: z.string(), text: z.string() })),
});

/** `GET /v1/sessions/:id/context`: the last request sent, or the one the session would send now. */
export const contextJsonSchema = z.object({
  /** `last-request` or `prepared`. */
  source: z.string(),
  system: z.string(),
  messages: z.array(messageSchema),
  openai: z.array(z.unknown()),
  channels: channelsJsonSchema,
  tokens: z.object({ contextWindow: count, usable: count, total: count }),
  events: z.array(governanceEventJsonSchema),
  preparedAt: z.string(),
});

/** A stored message as the API shows it (ids as the tenant knows them). */
export type MessageJson = z.infer<typeof messageSchema>;
/** A session as the API shows it. */
export type SessionJson = z.infer<typeof sessionJsonSchema>;
/** A page of sessions, or search results with their hits. */
export type SessionListJson = z.infer<typeof sessionListJsonSchema>;
/** Tokens of a payload by channel. */
export type ChannelsJson = z.infer<typeof channelsJsonSchema>;
/** A governance event as the API shows it. */
export type GovernanceEventJson = z.infer<typeof governanceEventJsonSchema>;
/** A span a reply used that its view lacked. */
export type MissingSpanJson = z.infer<typeof missingSpanJsonSchema>;
/** One request of a session's timeline. */
export type TimelineRequestJson = z.infer<typeof timelineRequestJsonSchema>;
/** `GET /v1/sessions/:id/timeline`. */
export type TimelineJson = z.infer<typeof timelineJsonSchema>;
/** `GET /v1/sessions/:id/timeline/:index`. */
export type RequestPayloadJson = z.infer<typeof requestPayloadJsonSchema>;
/** `GET /v1/sessions/:id/context`. */
export type ContextJson = z.infer<typeof contextJsonSchema>;
