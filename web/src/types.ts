/** The JSON shapes of the server API the inspector reads (docs/server-api.md). */

/** Token usage totals of a session. */
export interface UsageTotals {
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  readonly reasoning: number;
}

/** A stored session as the API returns it. */
export interface Session {
  readonly id: string;
  readonly title?: string;
  readonly agent?: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly messageCount: number;
  readonly turnCount: number;
  readonly usage: UsageTotals;
  readonly cost: number;
  readonly stored: boolean;
  readonly origin?: { readonly format: string; readonly source: string };
}

/** A page of sessions, or search results with their hits. */
export interface SessionList {
  readonly sessions: readonly Session[];
  readonly nextCursor?: string;
  readonly hits?: readonly { readonly sessionId: string; readonly seq?: number; readonly snippet: string }[];
}

/** One content block of a message (only the fields the inspector shows). */
export type ContentBlock =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "reasoning"; readonly text: string }
  | { readonly type: "tool-call"; readonly id: string; readonly name: string; readonly input: unknown }
  | {
      readonly type: "tool-result";
      readonly callId: string;
      readonly toolName: string;
      readonly content: unknown;
      readonly isError?: boolean;
      readonly offloadRef?: string;
    }
  | { readonly type: "image" | "file"; readonly ref?: string; readonly mediaType?: string }
  | {
      readonly type: "opaque";
      readonly provider: string;
      readonly data: { readonly [key: string]: unknown };
    };

/** A message of the ctxkit model. */
export interface Message {
  readonly id: string;
  readonly seq: number;
  readonly turn: number;
  readonly role: "system" | "user" | "assistant" | "tool";
  readonly content: readonly ContentBlock[];
  readonly createdAt: string;
  readonly kind?: string;
  readonly summaryOf?: { readonly fromSeq: number; readonly toSeq: number; readonly messageCount: number };
}

/** Tokens of a payload by channel. */
export interface Channels {
  readonly system: readonly { readonly name: string; readonly tokens: number; readonly truncated: boolean }[];
  readonly summary: number;
  readonly history: { readonly user: number; readonly assistant: number };
  readonly toolOutputs: number;
  readonly currentInput: number;
  readonly total: number;
}

/** A governance event (type-specific fields are shown as they come). */
export interface GovernanceEvent {
  readonly type: string;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  readonly messageIds: readonly string[];
  readonly refs?: readonly string[];
  readonly reason?: string;
  readonly [field: string]: unknown;
}

/** A span a request's recorded reply used that its governed view lacked, and the message that held it. */
export interface MissingSpan {
  /** `anchor` (a line an edit replaced), `path`, `identifier` or `literal`. */
  readonly kind: string;
  readonly text: string;
  readonly source: {
    readonly id: string;
    readonly seq: number;
    readonly role: string;
    /** What governance did to that message in this view. */
    readonly fate: "offloaded" | "cut" | "summarised" | "removed";
    /** The payload message standing for it (itself, or the summary covering it). */
    readonly viewMessageId?: string;
  };
}

/** Next-step grounding of one request. */
export interface Grounding {
  /** Share of the spans the reply copied from context still in view; absent when it copied none. */
  readonly score?: number;
  readonly spans: number;
  readonly kept: number;
  readonly anchors: number;
  readonly anchorsKept: number;
  readonly missing: readonly MissingSpan[];
  readonly missingCount: number;
}

/** One request of a session's timeline. */
export interface TimelineRequest {
  readonly index: number;
  readonly replySeq: number;
  readonly at: string;
  readonly raw: Channels;
  readonly governed: Channels;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
  /** Input cost in units of the uncached input price. */
  readonly costUnits: number;
  readonly rereadCostUnits: number;
  /** Absent when governance refused the request. */
  readonly grounding?: Grounding;
  readonly checkpoint: boolean;
  readonly events: readonly GovernanceEvent[];
  readonly error?: string;
}

/** The prompt-cache model a timeline was priced with. */
export interface CacheModel {
  readonly provider: string;
  readonly model?: string;
  readonly read: number;
  readonly write: number;
  readonly output: number;
  readonly ttlSeconds: number;
  readonly minTokens: number | null;
}

/** What the replay cost and kept (cost in units of the uncached input price). */
export interface TimelineTotals {
  readonly requests: number;
  readonly inputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
  readonly costUnits: number;
  readonly summaryCalls: number;
  readonly summarizerCostUnits: number;
  readonly rereads: number;
  readonly rereadCostUnits: number;
  readonly costWithRereads: number;
  readonly rawCostUnits: number;
  readonly grounding: number;
  readonly anchorsKept: number;
  readonly groundingWorst?: { readonly index: number; readonly score: number };
}

/** `GET /v1/sessions/:id/timeline`. */
export interface Timeline {
  readonly sessionId: string;
  readonly contextWindow: number;
  readonly usable: number;
  readonly fixedTokens: number;
  readonly model?: string;
  readonly settingsFrom: "session" | "recorded model" | "server";
  readonly cacheModel: CacheModel;
  readonly totals: TimelineTotals;
  readonly requests: readonly TimelineRequest[];
}

/** `GET /v1/sessions/:id/timeline/:index`. */
export interface RequestPayload {
  readonly request: TimelineRequest;
  readonly messages: readonly Message[];
  readonly openai: readonly unknown[];
  readonly summaries: readonly { readonly id: string; readonly text: string }[];
}

/** `GET /v1/sessions/:id/context`. */
export interface ContextAnswer {
  readonly source: string;
  readonly system: string;
  readonly messages: readonly Message[];
  readonly openai: readonly unknown[];
  readonly channels: Channels;
  readonly tokens: { readonly contextWindow: number; readonly usable: number; readonly total: number };
  readonly events: readonly GovernanceEvent[];
  readonly preparedAt: string;
}
