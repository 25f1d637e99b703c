import type { Message, ToolResultBlock } from "../model/message.ts";

/** Text of the synthetic result given to a tool call that never got one. */
export const INTERRUPTED_RESULT = "[interrupted]";

/** What orphan repair changed. */
export interface OrphanRepairReport {
  /** Call ids that got a synthetic `[interrupted]` error result. */
  readonly synthesized: readonly string[];
  /** Call ids of results dropped because their call is not right before them. */
  readonly dropped: readonly string[];
}

/**
 * Makes a message list acceptable to every provider: each assistant tool call is answered by a result in the
 * block of tool messages right after it (a missing one gets a synthetic `[interrupted]` error result), and a
 * result without its call there is dropped. Returns the input array itself when nothing needed repair.
 *
 * @example
 * const { messages: safe } = repairOrphans(view);
 */
export function repairOrphans(messages: readonly Message[]): {
  messages: readonly Message[];
  report: OrphanRepairReport;
} {
  const synthesized: string[] = [];
  const dropped: string[] = [];
  let output: Message[] | undefined;
  let index = 0;
  while (index < messages.length) {
    const message = messages[index]!;
    if (message.role === "tool") {
      // A tool message not directly after an assistant step has no call to answer.
      for (const block of message.content) if (block.type === "tool-result") dropped.push(block.callId);
      output ??= messages.slice(0, index);
      index++;
      continue;
    }
    output?.push(message);
    index++;
    if (message.role !== "assistant") continue;
    // Most steps call no tool and are followed by no tool message: nothing to pair (and no allocation per step,
    // since the whole view is checked on every request).
    if (messages[index]?.role !== "tool" && !message.content.some(isToolCall)) continue;
    const callIds = message.content.flatMap((block) => (block.type === "tool-call" ? [block.id] : []));
    const open = new Set(callIds);
    const blockStart = index;
    const kept: Message[] = [];
    let changed = false;
    while (index < messages.length && messages[index]!.role === "tool") {
      const toolMessage = messages[index]!;
      const results = toolMessage.content.filter(
        (block): block is ToolResultBlock => block.type === "tool-result",
      );
      const answering = results.filter((result) => open.delete(result.callId));
      if (answering.length === results.length && results.length > 0) kept.push(toolMessage);
      else {
        changed = true;
        for (const result of results) if (!answering.includes(result)) dropped.push(result.callId);
        if (answering.length > 0) kept.push({ ...toolMessage, content: answering });
      }
      index++;
    }
    if (open.size > 0) changed = true;
    if (!changed) {
      output?.push(...kept);
      continue;
    }
    output ??= messages.slice(0, blockStart);
    output.push(...kept);
    for (const callId of callIds) {
      if (!open.has(callId)) continue;
      const call = message.content.find((block) => block.type === "tool-call" && block.id === callId);
      synthesized.push(callId);
      output.push({
        id: `${message.id}:interrupted:${callId}`,
        sessionId: message.sessionId,
        seq: message.seq,
        turn: message.turn,
        role: "tool",
        createdAt: message.createdAt,
        content: [
          {
            type: "tool-result",
            callId,
            toolName: call?.type === "tool-call" ? call.name : "",
            content: INTERRUPTED_RESULT,
            isError: true,
          },
        ],
      });
    }
  }
  return { messages: output ?? messages, report: { synthesized, dropped } };
}

const isToolCall = (block: { readonly type: string }): boolean => block.type === "tool-call";

/**
 * `repairOrphans` for a list that only grows at its end between calls (a governor's view between checkpoints):
 * the steps before the last one are complete, and once found needing no repair they are not read again, so a call
 * costs what was appended since, not the whole list. A different list (or a shorter one) is read whole.
 *
 * @example
 * const repair = new AppendOnlyOrphanRepair();
 * repair.repair(view); // the same as repairOrphans(view)
 */
export class AppendOnlyOrphanRepair {
  #list: readonly Message[] | undefined;
  #length = 0;
  /** Messages before this index need no repair and end at a complete step (an assistant message starts here). */
  #settled = 0;

  /** `repairOrphans(messages)`, and `kept`: how many leading messages are `messages`' own, unchanged. */
  repair(messages: readonly Message[]): ReturnType<typeof repairOrphans> & { kept: number } {
    const from = messages === this.#list && messages.length >= this.#length ? this.#settled : 0;
    // The last step's results may still come: it is repaired on every call; the steps before it are complete.
    let lastStep = messages.length - 1;
    while (lastStep > from && messages[lastStep]!.role !== "assistant") lastStep--;
    if (lastStep < from || messages[lastStep]?.role !== "assistant") lastStep = from;
    const settling = messages.slice(from, lastStep);
    if (repairOrphans(settling).messages !== settling) {
      // Repair inside the complete steps (rare): the whole list, and nothing remembered.
      this.#list = undefined;
      return { ...repairOrphans(messages), kept: 0 };
    }
    this.#list = messages;
    this.#length = messages.length;
    this.#settled = lastStep;
    const tail = messages.slice(lastStep);
    const repaired = repairOrphans(tail);
    if (repaired.messages === tail) return { messages, report: repaired.report, kept: messages.length };
    return {
      messages: [...messages.slice(0, lastStep), ...repaired.messages],
      report: repaired.report,
      kept: lastStep,
    };
  }
}
