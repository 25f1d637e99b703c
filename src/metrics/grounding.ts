import type { ContentBlock, Message } from "../model/message.ts";
import { blockUnits, messageUnits, type GroundingUnit } from "./grounding-units.ts";
import { replySpans, type ReplySpan } from "./reply-spans.ts";

/** A span the reply used that the view did not show verbatim in a recorded message. */
export interface MissingSpan {
  readonly span: ReplySpan;
  /** The newest message of the history that held it: what the agent would have had to read again. */
  readonly source: Message;
}

/** Grounding of one request (DESIGN.md, "What the agent needs next"). */
export interface GroundingObservation {
  /** Spans of the reply that the history held before the request (copied from context). */
  readonly spans: number;
  /**
   * Of those, the spans present in a view message sent exactly as recorded (not in a summary, a preview, an
   * outline or any other text governance wrote): the strict count every headline uses.
   */
  readonly kept: number;
  /** Edit anchors among the spans, and how many the view kept (strictly). */
  readonly anchors: number;
  readonly anchorsKept: number;
  /** `kept / spans`; undefined when the reply copied nothing. */
  readonly score: number | undefined;
  /**
   * The lenient figures: a span anywhere in the view counts, text governance wrote included (a summary, an
   * offload preview). Labelled as such wherever shown.
   */
  readonly lenientKept: number;
  readonly lenientAnchorsKept: number;
  readonly lenientScore: number | undefined;
  /** The spans not kept (strictly): what the agent would have had to read again. */
  readonly missing: readonly MissingSpan[];
}

/** Grounding over the requests of one replay. */
export interface GroundingTotals {
  readonly requests: number;
  /** Requests whose reply copied at least one span. */
  readonly scoredRequests: number;
  /** Mean of the per-request (strict) scores (1 when no request copied anything). */
  readonly mean: number;
  /** Mean of the per-request lenient scores: spans in text governance wrote count too. */
  readonly lenientMean: number;
  readonly spans: number;
  readonly kept: number;
  readonly anchors: number;
  readonly anchorsKept: number;
  /** `anchorsKept / anchors` (1 when there were none). */
  readonly anchorShare: number;
  readonly lenientKept: number;
  readonly lenientAnchorsKept: number;
  /** `lenientAnchorsKept / anchors` (1 when there were none). */
  readonly lenientAnchorShare: number;
  /** The lowest-scoring request. */
  readonly worst?: { readonly index: number; readonly score: number };
}

/**
 * Next-step grounding, request by request: of the spans the recorded agent's reply to request k copied from its
 * context (edit anchors, paths, identifiers, literals — see `replySpans`), the share still present in the view
 * k sent verbatim in a recorded message sent unmodified. A span the history never held was invented by the agent
 * and does not count. Text governance generated — summaries, previews, outlines — is credited only by the
 * lenient figures, beside the strict ones.
 *
 * Work per request is proportional to what changed: history units are indexed once per new message, the view's
 * unit counts are updated only for the messages that differ from the previous view, and each span is one map
 * look-up.
 *
 * @example
 * const grounding = new GroundingTracker();
 * const observation = grounding.observe(history, request.messages, recordedReply);
 * grounding.totals.mean;
 */
export class GroundingTracker {
  /** Unit → the newest history message holding it. */
  #history = new Map<GroundingUnit, Message>();
  #indexed: Message[] = [];
  /** The history's messages, to tell a view message sent as recorded from one governance rewrote or wrote. */
  #recorded = new Set<Message>();
  /** The history's content blocks: a rewritten message still sends the blocks governance left alone. */
  #recordedBlocks = new Set<ContentBlock>();
  #view: readonly Message[] = [];
  readonly #inView = new Map<GroundingUnit, number>();
  /** Units of the view's messages sent as recorded. */
  readonly #inRecorded = new Map<GroundingUnit, number>();
  /** The units each view message added to `#inRecorded` (its recorded blocks'), to take them out again. */
  readonly #recordedIn = new Map<Message, readonly ReadonlySet<GroundingUnit>[]>();
  #lenientSum = 0;
  #lenientKept = 0;
  #lenientAnchorsKept = 0;
  #requests = 0;
  #scored = 0;
  #scoreSum = 0;
  #spans = 0;
  #kept = 0;
  #anchors = 0;
  #anchorsKept = 0;
  #worst: { index: number; score: number } | undefined;

  /** Scores one request: `history` is every message before it, `view` what was sent, `reply` what came back. */
  observe(
    history: readonly Message[],
    view: readonly Message[],
    reply: readonly Message[],
  ): GroundingObservation {
    const index = this.#requests++;
    this.#indexHistory(history);
    this.#updateView(view);
    let spans = 0;
    let kept = 0;
    let anchors = 0;
    let anchorsKept = 0;
    let lenientKept = 0;
    let lenientAnchorsKept = 0;
    const missing: MissingSpan[] = [];
    for (const span of replySpans(reply)) {
      const source = this.#history.get(span.unit);
      if (source === undefined) continue;
      spans++;
      const anchor = span.kind === "anchor";
      if (anchor) anchors++;
      if ((this.#inView.get(span.unit) ?? 0) > 0) {
        lenientKept++;
        if (anchor) lenientAnchorsKept++;
      }
      if ((this.#inRecorded.get(span.unit) ?? 0) > 0) {
        kept++;
        if (anchor) anchorsKept++;
      } else missing.push({ span, source });
    }
    const score = spans === 0 ? undefined : kept / spans;
    const lenientScore = spans === 0 ? undefined : lenientKept / spans;
    this.#spans += spans;
    this.#kept += kept;
    this.#anchors += anchors;
    this.#anchorsKept += anchorsKept;
    this.#lenientKept += lenientKept;
    this.#lenientAnchorsKept += lenientAnchorsKept;
    if (score !== undefined) {
      this.#scored++;
      this.#scoreSum += score;
      this.#lenientSum += lenientScore!;
      if (this.#worst === undefined || score < this.#worst.score) this.#worst = { index, score };
    }
    return {
      spans,
      kept,
      anchors,
      anchorsKept,
      score,
      lenientKept,
      lenientAnchorsKept,
      lenientScore,
      missing,
    };
  }

  /** Totals over the requests observed so far. */
  get totals(): GroundingTotals {
    return {
      requests: this.#requests,
      scoredRequests: this.#scored,
      mean: this.#scored === 0 ? 1 : this.#scoreSum / this.#scored,
      lenientMean: this.#scored === 0 ? 1 : this.#lenientSum / this.#scored,
      spans: this.#spans,
      kept: this.#kept,
      anchors: this.#anchors,
      anchorsKept: this.#anchorsKept,
      anchorShare: this.#anchors === 0 ? 1 : this.#anchorsKept / this.#anchors,
      lenientKept: this.#lenientKept,
      lenientAnchorsKept: this.#lenientAnchorsKept,
      lenientAnchorShare: this.#anchors === 0 ? 1 : this.#lenientAnchorsKept / this.#anchors,
      ...(this.#worst !== undefined && { worst: this.#worst }),
    };
  }

  #indexHistory(history: readonly Message[]): void {
    const known = this.#indexed.length;
    const continues =
      history.length >= known && (known === 0 || history[known - 1] === this.#indexed[known - 1]);
    if (!continues) {
      this.#history = new Map();
      this.#indexed = [];
      this.#recorded = new Set();
      this.#recordedBlocks = new Set();
    }
    for (let position = this.#indexed.length; position < history.length; position++) {
      const message = history[position]!;
      this.#indexed.push(message);
      this.#recorded.add(message);
      for (const block of message.content) this.#recordedBlocks.add(block);
      // Governance's own summaries and markers are not the conversation's context.
      if (message.kind !== undefined) continue;
      for (const unit of messageUnits(message)) this.#history.set(unit, message);
    }
  }

  #updateView(view: readonly Message[]): void {
    const previous = this.#view;
    let same = 0;
    while (same < view.length && same < previous.length && view[same] === previous[same]) same++;
    for (let position = same; position < previous.length; position++) {
      const message = previous[position]!;
      for (const unit of messageUnits(message)) decrement(this.#inView, unit);
      for (const units of this.#recordedIn.get(message) ?? [])
        for (const unit of units) decrement(this.#inRecorded, unit);
      this.#recordedIn.delete(message);
    }
    for (let position = same; position < view.length; position++) {
      const message = view[position]!;
      for (const unit of messageUnits(message)) this.#inView.set(unit, (this.#inView.get(unit) ?? 0) + 1);
      // What was sent as recorded is decided when it enters the view, and undone with the same answer: the whole
      // message, or the blocks of it governance left alone.
      const recorded = this.#recorded.has(message)
        ? [messageUnits(message)]
        : message.content.filter((block) => this.#recordedBlocks.has(block)).map(blockUnits);
      if (recorded.length === 0) continue;
      this.#recordedIn.set(message, recorded);
      for (const units of recorded)
        for (const unit of units) this.#inRecorded.set(unit, (this.#inRecorded.get(unit) ?? 0) + 1);
    }
    this.#view = view;
  }
}

function decrement(counts: Map<GroundingUnit, number>, unit: GroundingUnit): void {
  const count = counts.get(unit)! - 1;
  if (count === 0) counts.delete(unit);
  else counts.set(unit, count);
}
