import type { Message, ToolCallBlock, ToolResultBlock } from "./message.ts";

/** A tool call and where its result is, if it has one. */
export interface ToolPair {
  readonly call: ToolCallBlock;
  /** Index of the assistant message holding the call. */
  readonly callIndex: number;
  readonly result: ToolResultBlock | undefined;
  /** Index of the message holding the result, or -1. */
  readonly resultIndex: number;
}

/**
 * Pairs every tool call with its result by id, in call order. A result whose call is missing is reported in
 * `orphanResults`.
 *
 * @example
 * const { pairs, orphanResults } = pairToolCalls(messages);
 * const unanswered = pairs.filter((pair) => pair.result === undefined);
 */
export function pairToolCalls(messages: readonly Message[]): {
  pairs: ToolPair[];
  orphanResults: { result: ToolResultBlock; index: number }[];
} {
  const pairs: ToolPair[] = [];
  const pending = new Map<string, number>();
  const orphanResults: { result: ToolResultBlock; index: number }[] = [];
  messages.forEach((message, index) => {
    for (const block of message.content) {
      if (block.type === "tool-call") {
        pending.set(block.id, pairs.length);
        pairs.push({ call: block, callIndex: index, result: undefined, resultIndex: -1 });
      } else if (block.type === "tool-result") {
        const at = pending.get(block.callId);
        if (at === undefined) {
          orphanResults.push({ result: block, index });
          continue;
        }
        pending.delete(block.callId);
        pairs[at] = { ...pairs[at]!, result: block, resultIndex: index };
      }
    }
  });
  return { pairs, orphanResults };
}

/** The step structure of a run: an assistant message and the tool messages right after it. */
export interface Step {
  /** Index of the assistant message. */
  readonly start: number;
  /** Index one past the last tool message answering it. */
  readonly end: number;
}

/** Index one past the block of tool messages that directly follows index `assistantIndex`. */
export function stepEnd(messages: readonly Message[], assistantIndex: number): number {
  let end = assistantIndex + 1;
  while (end < messages.length && messages[end]!.role === "tool") end++;
  return end;
}

/** Index of the newest step's assistant message (the last assistant message), or -1. */
export function newestStepStart(messages: readonly Message[]): number {
  for (let index = messages.length - 1; index >= 0; index--)
    if (messages[index]!.role === "assistant") return index;
  return -1;
}
