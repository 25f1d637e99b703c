import { planAnthropicBreakpoints } from "../formats/providers/anthropic/cache-breakpoints.ts";
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
 * is 1 (no fixed segment when 0), then one segment per message of `view`. `ctxkit` places them as the payload
 * builders do (`planAnthropicBreakpoints`, with the governor's `anchors`), so the replay prices what is sent.
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
  let newest = view.length - 1;
  while (newest >= 0 && ephemeral(view[newest]!)) newest--;
  if (placement === "newest") {
    const indices: number[] = offset > 0 ? [0] : [];
    if (newest >= 0) indices.push(newest + offset);
    return indices;
  }
  // The cache model bills prefixes too short to cache as uncached; the planner need not skip them.
  const planned = planAnthropicBreakpoints({
    messageCount: view.length,
    newestAssistantIndex: view.findLastIndex(
      (message, index) => index <= newest && message.role === "assistant",
    ),
    ephemeralTail: view.length - 1 - newest,
    hasTools: false,
    hasSystem: offset > 0,
    anchors,
    tokensThrough: () => Number.POSITIVE_INFINITY,
  });
  return planned
    .map(({ position }) => (position.at === "message" ? position.index + offset : 0))
    .sort((a, b) => a - b);
}
