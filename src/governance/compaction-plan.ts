import type { Message } from "../model/message.ts";
import { currentTurnStart, opensTurn } from "../model/turns.ts";
import { sumTokens } from "./processor.ts";

/** A contiguous range of messages to replace by one summary (`end` exclusive). */
export interface Segment {
  readonly start: number;
  readonly end: number;
}

/** Settings the planner needs. */
export interface PlanOptions {
  readonly usable: number;
  readonly tailShare: number;
  readonly minTailTurns: number;
  /** Keep as little as possible: no head anchor, only the newest step as tail. */
  readonly force: boolean;
}

/** Index just past the leading system messages. */
export function leadingSystemEnd(messages: readonly Message[]): number {
  let end = 0;
  while (end < messages.length && messages[end]!.role === "system") end++;
  return end;
}

/**
 * Index just past what every compaction keeps at the head: the leading system messages and, when it is small
 * (at most 10% of the usable window) and not the current turn, the first run — the task as the user first put
 * it and how it began; when the run is bigger (its tool output, typically), the task alone.
 */
export function headAnchorEnd(
  messages: readonly Message[],
  tokensOf: (message: Message) => number,
  usable: number,
): number {
  const headEnd = leadingSystemEnd(messages);
  if (headEnd >= messages.length || !opensTurn(messages[headEnd]!)) return headEnd;
  const turnStart = currentTurnStart(messages);
  let runEnd = headEnd + 1;
  while (runEnd < messages.length && messages[runEnd]!.role !== "user") runEnd++;
  if (headEnd === turnStart || runEnd > turnStart) return headEnd;
  const small = (end: number) => sumTokens(messages.slice(headEnd, end), tokensOf) <= 0.1 * usable;
  return small(runEnd) ? runEnd : small(headEnd + 1) ? headEnd + 1 : headEnd;
}

/**
 * Decides what a compaction summarises. Kept verbatim: leading system messages, a head anchor (the first run,
 * when it is small), the current instruction, and a tail of recent whole user turns worth at least
 * `tailShare` of the window (at least `minTailTurns` turns when they fit in half the window). When the current
 * turn alone is too big, its older steps are summarised too and the tail is its newest steps. Every boundary
 * falls on a message that starts a step or a turn, so a tool call never loses its result.
 */
export function planCompaction(
  messages: readonly Message[],
  tokensOf: (message: Message) => number,
  options: PlanOptions,
): Segment[] {
  const length = messages.length;
  const turnStart = currentTurnStart(messages);
  const instruction = messages[turnStart] !== undefined && opensTurn(messages[turnStart]) ? turnStart : -1;
  const tailFloor = options.force ? 0 : options.tailShare * options.usable;
  const tailMax = options.force ? 0 : Math.max(tailFloor, 0.5 * options.usable);

  const headEnd = options.force
    ? leadingSystemEnd(messages)
    : headAnchorEnd(messages, tokensOf, options.usable);

  // Tail of whole turns, newest first.
  let tailStart = length;
  let tailTokens = 0;
  let turnsKept = 0;
  let splitRun = instruction < 0;
  for (let index = length - 1; index >= headEnd; index--) {
    if (!opensTurn(messages[index]!)) continue;
    const turnTokens = sumTokens(messages.slice(index, tailStart), tokensOf);
    const fits = tailTokens + turnTokens <= tailMax;
    if (turnsKept === 0) {
      if (!fits) {
        splitRun = true;
        break;
      }
    } else if (!fits || (turnsKept >= options.minTailTurns && tailTokens >= tailFloor)) break;
    tailStart = index;
    tailTokens += turnTokens;
    turnsKept++;
  }

  if (!splitRun) return meaningful(messages, [{ start: headEnd, end: tailStart }]);

  // The current run is too big: keep its newest steps within the floor (at least the newest step).
  const runStart = instruction < 0 ? headEnd : instruction + 1;
  let runTail = length;
  let runTailTokens = 0;
  for (let index = length - 1; index >= runStart; index--) {
    if (messages[index]!.role !== "assistant") continue;
    const stepTokens = sumTokens(messages.slice(index, runTail), tokensOf);
    if (runTail !== length && runTailTokens + stepTokens > tailFloor) break;
    runTail = index;
    runTailTokens += stepTokens;
  }
  const segments = instruction < 0 ? [] : [{ start: headEnd, end: instruction }];
  segments.push({ start: runStart, end: runTail });
  return meaningful(messages, segments);
}

/** Drops empty segments and segments that hold nothing but one earlier summary. */
function meaningful(messages: readonly Message[], segments: Segment[]): Segment[] {
  return segments.filter(
    (segment) =>
      segment.end > segment.start &&
      !(segment.end - segment.start === 1 && messages[segment.start]!.kind === "summary"),
  );
}
