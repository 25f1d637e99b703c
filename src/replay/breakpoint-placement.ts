import type { Message } from "../model/message.ts";

/**
 * Who placed a payload's Anthropic `cache_control` breakpoints: `ctxkit` (system prompt and tools, the newest
 * stable message, the governor's cache anchors, and the previous request's newest message — the one before the
 * newest assistant message — while fewer than four) or `newest` (system prompt and tools, newest message only:
 * what Claude Code sends).
 */
export type BreakpointPlacement = "ctxkit" | "newest";

/** A message ctxkit appends to one request only (the budget notice): never a stable prefix. */
export function ephemeral(message: Message): boolean {
  return message.metadata?.["notice"] !== undefined;
}

/**
 * The segment indices of a payload's breakpoints: segment 0 is the system prompt with the tools when `offset`
 * is 1 (no fixed segment when 0), then one segment per message of `view`.
 *
 * @example
 * breakpointIndices("ctxkit", view, 1) // [0, 6, 8] for a 9-segment payload whose newest assistant is at 7
 */
export function breakpointIndices(
  placement: BreakpointPlacement,
  view: readonly Message[],
  offset: number,
  anchors: readonly number[] = [],
): number[] {
  const indices: number[] = offset > 0 ? [0] : [];
  let newest = view.length - 1;
  while (newest >= 0 && ephemeral(view[newest]!)) newest--;
  if (newest < 0) return indices;
  indices.push(newest + offset);
  if (placement === "ctxkit") {
    const assistant = view.findLastIndex((message, index) => index <= newest && message.role === "assistant");
    // Four breakpoints at most: the governor's anchors come before the previous request's newest message, which
    // the newest one's lookback usually reaches anyway.
    for (const anchor of anchors)
      if (anchor >= 0 && anchor < newest && !indices.includes(anchor + offset) && indices.length < 4)
        indices.push(anchor + offset);
    if (assistant > 0 && assistant - 1 !== newest && indices.length < 4) indices.push(assistant - 1 + offset);
  }
  return indices.sort((a, b) => a - b);
}
