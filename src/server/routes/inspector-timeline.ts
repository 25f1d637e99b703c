import { inspectPayload, type ChannelTokens } from "../../assembly/inspect.ts";
import { CtxkitError } from "../../errors/ctxkit-error.ts";
import type { GovernanceEvent } from "../../governance/events.ts";
import { createGovernor, type GovernorOptions } from "../../governance/governor.ts";
import { MemoryOffloadStore } from "../../governance/offload-store.ts";
import type { Message } from "../../model/message.ts";
import { PrefixCache } from "../../replay/prefix-cache.ts";
import { replayableMessages, requestPoints } from "../../replay/replay.ts";

/** One model request of a session's timeline: where its tokens went, governed and raw, and what governance did. */
export interface TimelineRequest {
  readonly index: number;
  /** Seq of the assistant reply that answered this request. */
  readonly replySeq: number;
  /** When the reply was recorded. */
  readonly at: string;
  /** The ungoverned history's tokens by channel. */
  readonly raw: ChannelTokens;
  /** The governed payload's tokens by channel (zero everywhere when governance refused the request). */
  readonly governed: ChannelTokens;
  /** Governed tokens a provider's prompt cache would serve (identical prefix with the previous request). */
  readonly cachedTokens: number;
  readonly checkpoint: boolean;
  readonly events: readonly GovernanceEvent[];
  /** The refusal's error code, when governance refused to send the request. */
  readonly error?: string;
}

/** A session's timeline with what is needed to answer payload and offload questions about any request. */
export interface Timeline {
  readonly requests: readonly TimelineRequest[];
  /** Governed messages of each request, by index (empty for a refused request). */
  readonly views: readonly (readonly Message[])[];
  /** Tokens of the system prompt and tools per request (derived from the first recorded usage). */
  readonly fixedTokens: number;
  readonly contextWindow: number;
  readonly usable: number;
  /** Reads back an output the replay offloaded or truncated. */
  readonly offloaded: (ref: string) => Promise<string | undefined>;
}

/** Governor settings of a timeline replay (no `onEvent` and no offload store: the replay keeps its own). */
export type TimelineOptions = Omit<GovernorOptions, "onEvent" | "offloadStore">;

const FIXED_SECTION = "system prompt and tools";

function refused(sections: ChannelTokens["system"]): ChannelTokens {
  return {
    system: sections.map((section) => ({ ...section, tokens: 0 })),
    summary: 0,
    history: { user: 0, assistant: 0 },
    toolOutputs: 0,
    currentInput: 0,
    total: 0,
  };
}

/**
 * Replays a stored session's history request by request (one request per assistant reply, like
 * `replayConversation`) through a fresh governor and keeps, per request, the governed view, its tokens by
 * channel next to the raw history's, the simulated prompt-cache hits and the full governance events. Offloaded
 * outputs stay in the replay's own in-memory store: nothing is written anywhere.
 *
 * @example
 * const timeline = await buildTimeline(messages, { contextWindow: 128_000, counter, summarizer });
 * timeline.requests[3]?.governed.toolOutputs;
 */
export async function buildTimeline(stored: readonly Message[], options: TimelineOptions): Promise<Timeline> {
  const messages = replayableMessages(stored);
  const offloadStore = new MemoryOffloadStore();
  let events: GovernanceEvent[] = [];
  const governor = createGovernor({ ...options, offloadStore, onEvent: (event) => events.push(event) });
  const points = requestPoints(messages);
  const fixed = recordedFixedTokens(messages, points, governor.tokensOf, governor.window.usable);
  const sections = fixed > 0 ? [{ name: FIXED_SECTION, tokens: fixed, truncated: false }] : [];
  const cache = new PrefixCache();
  const requests: TimelineRequest[] = [];
  const views: (readonly Message[])[] = [];
  for (const [index, end] of points.entries()) {
    const history = messages.slice(0, end);
    const reply = messages[end]!;
    const raw = inspectPayload({ system: "", messages: history }, sections, governor.tokensOf).channels;
    const base = { index, replySeq: reply.seq, at: reply.createdAt, raw };
    events = [];
    try {
      const request = await governor.prepare(history, { fixedTokens: fixed });
      const common = cache.observe(request.messages);
      let cachedTokens = index === 0 ? 0 : fixed;
      for (let position = 0; position < common; position++)
        cachedTokens += governor.tokensOf(request.messages[position]!);
      const payload = { system: "", messages: request.messages };
      const governed = inspectPayload(payload, sections, governor.tokensOf).channels;
      requests.push({ ...base, governed, cachedTokens, checkpoint: request.checkpoint, events });
      views.push(request.messages);
    } catch (error) {
      if (!CtxkitError.isInstance(error)) throw error;
      cache.observe([]);
      const governed = refused(sections);
      requests.push({ ...base, governed, cachedTokens: 0, checkpoint: false, events, error: error.code });
      views.push([]);
    }
    governor.recordSuccess();
  }
  return {
    requests,
    views,
    fixedTokens: fixed,
    contextWindow: governor.window.contextWindow,
    usable: governor.window.usable,
    offloaded: (ref) => offloadStore.getText(ref),
  };
}

/**
 * The system prompt and tools the recorded agent sent, which transcripts do not hold: the first request's
 * reported input minus the messages before it (0 without usage, or when it would take over a quarter of the
 * usable window — then the replay's window is too small for it).
 */
function recordedFixedTokens(
  messages: readonly Message[],
  points: readonly number[],
  tokensOf: (message: Message) => number,
  usable: number,
): number {
  const first = points[0] === undefined ? undefined : messages[points[0]];
  if (first?.usage === undefined) return 0;
  let before = 0;
  for (const message of messages.slice(0, points[0])) before += tokensOf(message);
  const fixed = Math.max(0, first.usage.input - before);
  return fixed > 0.25 * usable ? 0 : fixed;
}
