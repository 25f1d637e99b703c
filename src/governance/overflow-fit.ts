import type { Message } from "../model/message.ts";
import { currentTurnStart, opensTurn } from "../model/turns.ts";
import { leadingSystemEnd } from "./compaction-plan.ts";
import type { GovernanceEvent } from "./events.ts";
import { runPipeline, type Processor, type ProcessorContext } from "./processor.ts";
import { fitNewestStep } from "./processors/truncate-tool-results.ts";

/** How `fitToWindow` measures a candidate view. */
export interface WindowMeasure {
  /** Whether the view, as sent, fits the window with the output reserve. */
  fits(view: readonly Message[]): boolean;
  /** What the view's messages may use, in the counter's tokens. */
  budget(view: readonly Message[]): number;
}

/**
 * Shrinks a view that would overflow, each stage only when the ones before did not suffice: the pipeline's
 * overflow processors (compaction with a minimal tail); the newest step's results cut to share what is left of the
 * window; and, when even that leaves no room because of older history (summaries included), the protected part
 * alone — leading system messages, the current instruction and the newest step — its results cut to fit (unless the
 * pipeline has no overflow processor, and only when that fits). Events go to `pending`; returns the ids it dropped.
 */
export async function fitToWindow(
  view: readonly Message[],
  onOverflow: readonly Processor[],
  forced: ProcessorContext,
  measure: WindowMeasure,
  pending: GovernanceEvent[],
): Promise<{ view: readonly Message[]; dropped: string[] }> {
  const compacted = await runPipeline(onOverflow, view, forced);
  if (measure.fits(compacted)) return { view: compacted, dropped: [] };
  const capped: GovernanceEvent[] = [];
  const fitted = await fitNewestStep(compacted, measure.budget(compacted), {
    ...forced,
    emit: (event) => capped.push(event),
  });
  // Dropping older history is compaction too: not when the pipeline has none for an overflow.
  const minimal = onOverflow.length > 0 ? protectedPart(compacted) : compacted;
  if (measure.fits(fitted) || minimal.length === compacted.length) {
    pending.push(...capped);
    return { view: fitted, dropped: [] };
  }
  const minimalEvents: GovernanceEvent[] = [];
  const fittedMinimal = await fitNewestStep(minimal, measure.budget(minimal), {
    ...forced,
    emit: (event) => minimalEvents.push(event),
  });
  if (!measure.fits(fittedMinimal)) {
    // Refused anyway: the view keeps its older history for the requests after this one.
    pending.push(...capped);
    return { view: fitted, dropped: [] };
  }
  pending.push(...minimalEvents);
  const kept = new Set(minimal);
  const dropped = compacted.filter((message) => !kept.has(message)).map((message) => message.id);
  return { view: fittedMinimal, dropped };
}

/** What a request cannot do without: leading system messages, the current instruction, its run's newest step. */
function protectedPart(view: readonly Message[]): Message[] {
  const start = currentTurnStart(view);
  const instruction = view[start];
  const newestStep = view.findLastIndex((message) => message.role === "assistant");
  return [
    ...view.slice(0, leadingSystemEnd(view)),
    ...(instruction !== undefined && opensTurn(instruction) ? [instruction] : []),
    ...(newestStep > start ? view.slice(newestStep) : []),
  ];
}
