import { inspectPayload, type ChannelTokens } from "../../assembly/inspect.ts";
import type { GovernanceEvent } from "../../governance/events.ts";
import type { GovernorOptions } from "../../governance/governor.ts";
import { MemoryOffloadStore } from "../../governance/offload-store.ts";
import type { MissingSpan } from "../../metrics/grounding.ts";
import type { SpanKind } from "../../metrics/reply-spans.ts";
import type { Message } from "../../model/message.ts";
import { cacheProfiles, type CacheProfile } from "../../pricing/cache-profile.ts";
import { ReplayMeter, type MeterTotals } from "../../replay/replay-meter.ts";
import { governedReplay } from "../../replay/replay.ts";

/** What became of the history message that held a span the view lacked. */
export type SpanSourceFate = "offloaded" | "cut" | "summarised" | "removed";

/** A span the recorded reply used that the governed view did not show, and where it had been. */
export interface TimelineMissingSpan {
  readonly kind: SpanKind;
  /** The span as the reply wrote it (cut to `MAX_SPAN_CHARS`). */
  readonly text: string;
  /** The newest history message that held it, and what governance did to it in this request's view. */
  readonly source: {
    readonly id: string;
    readonly seq: number;
    readonly role: Message["role"];
    readonly fate: SpanSourceFate;
    /** The view message that stands for it: itself (offloaded or cut), or the summary that covers it. */
    readonly viewMessageId?: string;
  };
}

/** Next-step grounding of one request: how much of what its recorded reply copied from context it still showed. */
export interface TimelineGrounding {
  /** `kept / spans`; absent when the reply copied nothing from its context. */
  readonly score?: number;
  readonly spans: number;
  readonly kept: number;
  readonly anchors: number;
  readonly anchorsKept: number;
  /** The spans the view lacked (at most `MAX_MISSING`; `missingCount` has them all). */
  readonly missing: readonly TimelineMissingSpan[];
  readonly missingCount: number;
}

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
  /** Governed tokens the provider's prompt cache served (breakpoints, expiry: the session's cache model). */
  readonly cacheReadTokens: number;
  /** Governed tokens written to the prompt cache. */
  readonly cacheWriteTokens: number;
  /** The request's input cost, in units of the uncached input price. */
  readonly costUnits: number;
  /** What reading again the spans its reply used but the view lacked would have cost (0 when none). */
  readonly rereadCostUnits: number;
  /** Absent when governance refused the request. */
  readonly grounding?: TimelineGrounding;
  readonly checkpoint: boolean;
  readonly events: readonly GovernanceEvent[];
  /** The refusal's error code, when governance refused to send the request. */
  readonly error?: string;
}

/** What the whole replay cost and kept, as `ctxkit replay` totals it. */
export interface TimelineTotals extends MeterTotals {
  /** The same history ungoverned, billed by the same cache model. */
  readonly rawCostUnits: number;
  /** Mean next-step grounding over the requests whose reply copied something (1 when none did). */
  readonly grounding: number;
  /** Share of edit anchors still in view (1 when there were none). */
  readonly anchorsKept: number;
  readonly groundingWorst?: { readonly index: number; readonly score: number };
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
  readonly cache: CacheProfile;
  readonly totals: TimelineTotals;
  /** Reads back an output the replay offloaded or truncated. */
  readonly offloaded: (ref: string) => Promise<string | undefined>;
}

/** Governor settings of a timeline replay (no `onEvent` and no offload store: the replay keeps its own). */
export interface TimelineOptions extends Omit<GovernorOptions, "onEvent" | "offloadStore"> {
  /** The provider cache that bills the requests. Default: Anthropic's reference profile. */
  readonly cache?: CacheProfile;
}

const FIXED_SECTION = "system prompt and tools";
const MAX_MISSING = 20;
const MAX_SPAN_CHARS = 240;

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

/** Where the message that held a missing span went in `view`. */
function sourceOf(missing: MissingSpan, view: readonly Message[]): TimelineMissingSpan["source"] {
  const { id, seq, role } = missing.source;
  const kept = view.find((message) => message.id === id);
  if (kept !== undefined) {
    const offloaded = kept.content.some(
      (block) => block.type === "tool-result" && block.offloadRef !== undefined,
    );
    return { id, seq, role, fate: offloaded ? "offloaded" : "cut", viewMessageId: kept.id };
  }
  const summary = view.find(
    (message) =>
      message.kind === "summary" &&
      message.summaryOf !== undefined &&
      message.summaryOf.fromSeq <= seq &&
      seq <= message.summaryOf.toSeq,
  );
  if (summary !== undefined) return { id, seq, role, fate: "summarised", viewMessageId: summary.id };
  return { id, seq, role, fate: "removed" };
}

function missingSpanJson(missing: MissingSpan, view: readonly Message[]): TimelineMissingSpan {
  const text = missing.span.text;
  return {
    kind: missing.span.kind,
    text: text.length > MAX_SPAN_CHARS ? `${text.slice(0, MAX_SPAN_CHARS - 1)}…` : text,
    source: sourceOf(missing, view),
  };
}

/**
 * Replays a stored session's history request by request (one request per assistant reply, like
 * `replayConversation`) through a fresh governor and keeps, per request, the governed view, its tokens by
 * channel next to the raw history's, the full governance events, and what `ctxkit replay` measures: the bill of
 * the session's prompt-cache model (breakpoints, expiry from the recorded times), the summaries billed as LLM
 * calls, and the next-step grounding against the recorded reply, with the spans the view lacked and what became
 * of the messages that held them. Offloaded outputs stay in the replay's own in-memory store: nothing is written.
 *
 * @example
 * const timeline = await buildTimeline(messages, { contextWindow: 128_000, counter, summarizer, cache });
 * timeline.requests[3]?.grounding?.missing;
 */
export async function buildTimeline(stored: readonly Message[], options: TimelineOptions): Promise<Timeline> {
  const cache = options.cache ?? cacheProfiles.anthropic;
  const offloadStore = new MemoryOffloadStore();
  // The replay `ctxkit replay` runs (the recorded clock, the governor's cache anchors), so the two agree.
  const meterOptions = { cache, tokensOf: (message: Message) => replay.governor.tokensOf(message) };
  const meter = new ReplayMeter(meterOptions);
  const rawMeter = new ReplayMeter({ ...meterOptions, grounding: false });
  const replay = governedReplay(stored, {
    ...options,
    offloadStore,
    onSummary: (call) => meter.summary(call),
  });
  const { governor, fixed } = replay;
  const sections = fixed.tokens > 0 ? [{ name: FIXED_SECTION, tokens: fixed.tokens, truncated: false }] : [];
  const requests: TimelineRequest[] = [];
  const views: (readonly Message[])[] = [];
  let rawLength = 0;
  for await (const step of replay.steps) {
    const { index, history, reply, view } = step;
    const times = { at: step.at, refreshedAt: step.refreshedAt };
    const raw = inspectPayload({ system: "", messages: history }, sections, governor.tokensOf).channels;
    const base = { index, replySeq: reply[0]!.seq, at: reply[0]!.createdAt, raw, events: step.eventDetails };
    rawMeter.request({ ...times, fixed, history, view: history, reply, unchanged: rawLength });
    rawLength = history.length;
    if (view === undefined) {
      requests.push({
        ...base,
        governed: refused(sections),
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        costUnits: 0,
        rereadCostUnits: 0,
        checkpoint: false,
        ...(step.error !== undefined && { error: step.error }),
      });
      views.push([]);
      continue;
    }
    const measured = meter.request({
      ...times,
      fixed,
      history,
      view,
      reply,
      ...(step.cacheAnchors !== undefined && { anchors: step.cacheAnchors }),
    });
    const observed = measured.grounding!;
    requests.push({
      ...base,
      governed: inspectPayload({ system: "", messages: view }, sections, governor.tokensOf).channels,
      cacheReadTokens: measured.bill.cacheRead,
      cacheWriteTokens: measured.bill.cacheWrite,
      costUnits: measured.bill.costUnits,
      rereadCostUnits: measured.rereadCostUnits,
      grounding: {
        ...(observed.score !== undefined && { score: observed.score }),
        spans: observed.spans,
        kept: observed.kept,
        anchors: observed.anchors,
        anchorsKept: observed.anchorsKept,
        missing: observed.missing.slice(0, MAX_MISSING).map((missing) => missingSpanJson(missing, view)),
        missingCount: observed.missing.length,
      },
      checkpoint: step.checkpoint,
    });
    views.push(view);
  }
  const grounding = meter.grounding!.totals;
  return {
    requests,
    views,
    fixedTokens: fixed.tokens,
    contextWindow: governor.window.contextWindow,
    usable: governor.window.usable,
    cache,
    totals: {
      ...meter.totals,
      rawCostUnits: rawMeter.totals.costUnits,
      grounding: grounding.mean,
      anchorsKept: grounding.anchorShare,
      ...(grounding.worst !== undefined && { groundingWorst: grounding.worst }),
    },
    offloaded: (ref) => offloadStore.getText(ref),
  };
}
