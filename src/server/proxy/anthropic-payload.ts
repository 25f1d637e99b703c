import {
  anthropicAnchors,
  toAnthropic,
  withAnthropicBreakpoints,
  type AnthropicAnchor,
  type AnthropicCacheableRequest,
  type AnthropicMessage,
} from "../../formats/providers/anthropic/index.ts";
import type { Message } from "../../model/message.ts";

/** The governed view of a client's history, and where its unchanged messages came from. */
export interface GovernedView {
  readonly messages: readonly Message[];
  /** For each message, the index of the history message it is unchanged from (undefined: rewritten or new). */
  readonly sources: readonly (number | undefined)[];
  /** The governor's cache anchors, indices in `messages` (`GovernedRequest.cacheAnchors`). */
  readonly cacheAnchors?: readonly number[];
}

/** The `messages` to send and where the governor's cache anchors fall in them. */
export interface GovernedAnthropicMessages {
  readonly messages: AnthropicMessage[];
  readonly anchors: AnthropicAnchor[];
}

type ClientMessage = { readonly role?: unknown; readonly content?: unknown };

/** How many history messages `fromAnthropic` makes of one client message: a user message splits per tool result. */
function importedCount(message: ClientMessage): number {
  if (message.role !== "user" || !Array.isArray(message.content)) return 1;
  const blocks = message.content as { type?: unknown }[];
  const results = blocks.filter((block) => block.type === "tool_result").length;
  return results + (blocks.length > results ? 1 : 0);
}

/**
 * The `messages` to send for a governed view of a client's Anthropic history. The client's newest messages that
 * governance left as they were are sent as the client sent them — byte for byte, with their `cache_control`
 * markers, signatures and any field ctxkit does not model — and everything before them is the governed view
 * converted with `toAnthropic` (summaries, offloaded outputs; unchanged messages convert back to the client's
 * bytes apart from markers). Without any such tail (a notice ends the view) the whole view is converted. The
 * governor's cache anchors in the converted part are placed for `withCompletedBreakpoints`.
 *
 * @example
 * const { messages, anchors } = governedAnthropicMessages(request.messages, governed);
 */
export function governedAnthropicMessages(
  client: readonly unknown[],
  governed: GovernedView,
): GovernedAnthropicMessages {
  const counts = client.map((message) => importedCount(message as ClientMessage));
  const ends: number[] = [];
  counts.reduce((end, count) => (ends.push(end + count), end + count), 0);
  const { messages, sources } = governed;
  let kept = 0;
  let cut = messages.length;
  for (let index = client.length - 1; index >= 0; index--) {
    const count = counts[index]!;
    const start = ends[index]! - count;
    if (count === 0 || cut < count) break;
    let same = true;
    for (let offset = 0; offset < count && same; offset++)
      same = sources[cut - count + offset] === start + offset;
    if (!same) break;
    cut -= count;
    kept++;
  }
  let head = toAnthropic(messages.slice(0, cut)).messages;
  // Two user messages in a row would be merged by the API; keep the seam exact by converting one more.
  while (kept > 0 && head.at(-1)?.role === (client[client.length - kept] as ClientMessage).role) {
    cut += counts[client.length - kept]!;
    kept--;
    head = toAnthropic(messages.slice(0, cut)).messages;
  }
  const anchors = anthropicAnchors(
    messages.slice(0, cut),
    (governed.cacheAnchors ?? []).filter((anchor) => anchor < cut),
    head,
  );
  return { messages: [...head, ...(client.slice(client.length - kept) as AnthropicMessage[])], anchors };
}

/** A client's messages with the system messages of its opening taken out (see `splitOpeningSystem`). */
export interface OpeningSplit {
  /** System messages that come before the first assistant message, as sent. */
  readonly opening: readonly AnthropicMessage[];
  /** Every other message, in order. */
  readonly rest: readonly unknown[];
}

/**
 * Takes out the system messages a client puts inside `messages` before the first reply (Claude Code sends its
 * environment so, right after the task). They are part of the prompt, not of the history: governance must never
 * summarise them away, so they are fixed, like the top-level `system`, and go back with `withOpeningSystem`.
 *
 * @example
 * const { opening, rest } = splitOpeningSystem(request.messages);
 */
export function splitOpeningSystem(client: readonly unknown[]): OpeningSplit {
  const firstReply = client.findIndex((message) => (message as ClientMessage).role === "assistant");
  const end = firstReply < 0 ? client.length : firstReply;
  const isOpening = (message: unknown, index: number) =>
    index < end && (message as ClientMessage).role === "system";
  return {
    opening: client.filter(isOpening) as AnthropicMessage[],
    rest: client.filter((message, index) => !isOpening(message, index)),
  };
}

/**
 * Puts the opening system messages back after the first message of the governed messages (the task, or the
 * summary that replaced it), as the client sent them; the anchors after it move with their messages.
 *
 * @example
 * const { messages, anchors } = withOpeningSystem(governedAnthropicMessages(rest, governed), opening);
 */
export function withOpeningSystem(
  governed: GovernedAnthropicMessages,
  opening: readonly AnthropicMessage[],
): GovernedAnthropicMessages {
  const { messages, anchors } = governed;
  if (opening.length === 0) return governed;
  if (messages.length === 0) return { messages: [...opening], anchors: [] };
  return {
    messages: [messages[0]!, ...opening, ...messages.slice(1)],
    anchors: anchors.map((anchor) =>
      anchor.message === 0 ? anchor : { ...anchor, message: anchor.message + opening.length },
    ),
  };
}

/**
 * Completes a Messages request's prompt-cache breakpoints: the client's own (on tools, system blocks and the
 * messages sent as they came) are kept and counted, and ctxkit adds its own where `withAnthropicBreakpoints`
 * puts them — never more than four in all. `ephemeralBlocks` are blocks at the end that exist in this request
 * only (a budget-exit notice): no breakpoint goes on them; `anchors` are the governor's cache anchors.
 *
 * @example
 * const body = withCompletedBreakpoints({ ...request, messages }, { model: request.model, ephemeralBlocks: 0 });
 */
export function withCompletedBreakpoints<Request extends { messages: AnthropicMessage[] }>(
  request: Request,
  options: {
    readonly model?: string;
    readonly ephemeralBlocks: number;
    readonly anchors?: readonly AnthropicAnchor[];
  },
): Request {
  return withAnthropicBreakpoints(request as Request & AnthropicCacheableRequest, {
    ...(options.model !== undefined && { model: options.model }),
    ephemeralBlocks: options.ephemeralBlocks,
    ...(options.anchors !== undefined && { anchors: options.anchors }),
  });
}
