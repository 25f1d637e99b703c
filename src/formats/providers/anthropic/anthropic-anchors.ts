import type { Message } from "../../../model/message.ts";
import { anchorPositions } from "../anchor-positions.ts";
import type { AnthropicMessage } from "./anthropic-message.ts";
import { toAnthropic } from "./to-anthropic.ts";
import type { AnthropicAnchor } from "./with-anthropic-breakpoints.ts";

const blocksOf = (message: AnthropicMessage): readonly unknown[] =>
  typeof message.content === "string" ? [message.content] : message.content;

/**
 * Where cache anchors (indices in `messages`, e.g. `GovernedRequest.cacheAnchors`) fall in
 * `toAnthropic(messages)`, for `withAnthropicBreakpoints`' `anchors`. `converted` is that conversion when the
 * caller has it already.
 *
 * @example
 * withAnthropicBreakpoints(toAnthropic(view), { anchors: anthropicAnchors(view, governed.cacheAnchors ?? []) });
 */
export function anthropicAnchors(
  messages: readonly Message[],
  anchors: readonly number[],
  converted: readonly AnthropicMessage[] = toAnthropic(messages).messages,
): AnthropicAnchor[] {
  return anchorPositions(
    messages,
    anchors,
    (prefix) => toAnthropic(prefix).messages,
    blocksOf,
    converted,
  ).map(({ message, parts }) => ({ message, blocks: parts }));
}
