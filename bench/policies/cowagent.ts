// The CowAgent seed's context policy (../shared/seeds/002_*.txt and DESIGN.md, "What peers do").
import type { Processor, ProcessorContext } from "../../src/governance/processor.ts";
import { withContent } from "../../src/governance/rewrite.ts";
import { headTail } from "../../src/governance/truncate-text.ts";
import { groupTurns, type Turn } from "../../src/model/turns.ts";
import type { Message } from "../../src/model/message.ts";
import { commitCompaction, marked, outputChars, payloadTokens, rewriteResults } from "./peer-support.ts";

const TRUNCATED = "cowagent:truncated";
const MAX_TURNS = 20;
const MAX_TOKENS = 50_000;

function cut(message: Message, mark: string, chars: number): Message {
  return rewriteResults(message, mark, (text) =>
    headTail(text, chars, 0.5, `[… truncated: ${text.length} characters …]`),
  );
}

/** Tool-result truncation: results above 20,000 characters in historical turns keep their beginning and end. */
export const cowAgentTruncation: Processor = {
  name: "cowagent-truncation",
  process(messages) {
    const turns = groupTurns(messages);
    const currentStart = turns.at(-1)?.start ?? 0;
    let output: Message[] | undefined;
    for (let index = 0; index < currentStart; index++) {
      const message = messages[index]!;
      if (message.role !== "tool" || marked(message, TRUNCATED) || outputChars(message) <= 20_000) continue;
      output ??= [...messages];
      output[index] = cut(message, TRUNCATED, 20_000);
    }
    return output ?? messages;
  },
};

function dropOldestHalf(messages: readonly Message[], turns: readonly Turn[]): readonly Message[] {
  const complete = turns.slice(0, -1);
  const drop = Math.ceil(complete.length / 2);
  if (drop === 0) return messages;
  return [...messages.slice(0, complete[0]!.start), ...messages.slice(complete[drop - 1]!.end)];
}

/** Each older turn keeps only its first user text and its last assistant reply. */
function textCompression(messages: readonly Message[], turns: readonly Turn[]): readonly Message[] {
  const output: Message[] = [];
  turns.forEach((turn, position) => {
    if (position === turns.length - 1) {
      output.push(...turn.messages);
      return;
    }
    const user = turn.messages.find((message) => message.role === "user");
    const reply = turn.messages.findLast(
      (message) => message.role === "assistant" && message.content.some((block) => block.type === "text"),
    );
    if (user) output.push(user);
    if (reply)
      output.push(
        withContent(
          reply,
          reply.content.filter((block) => block.type === "text"),
        ),
      );
  });
  return output;
}

/** The overflow emergency: tool results and user texts to 10k characters, the last 5 turns; then a clear. */
function emergency(messages: readonly Message[], context: ProcessorContext): readonly Message[] {
  const turns = groupTurns(messages).slice(-5);
  const kept = messages
    .slice(turns[0]?.start ?? 0)
    .map((message) =>
      message.role === "tool" && outputChars(message) > 10_000
        ? cut(message, "cowagent:emergency", 10_000)
        : message,
    );
  if (payloadTokens(kept, context) + context.window.reservedOutput <= context.window.contextWindow)
    return kept;
  const last = groupTurns(kept).at(-1);
  const newest = kept.findLastIndex((message) => message.role === "assistant");
  return last === undefined ? kept : [kept[last.start]!, ...kept.slice(Math.max(last.start + 1, newest))];
}

/**
 * Turn trimming above 20 turns (oldest half of the complete turns, written to memory, not kept in context), then
 * the 50k-token budget (text compression under 5 turns, else the first half again), then the overflow
 * emergency the agent would go through after the provider's error.
 */
export const cowAgentTrimming: Processor = {
  name: "cowagent-trimming",
  process(messages, context) {
    let next = messages;
    let turns = groupTurns(next);
    if (turns.length > MAX_TURNS) next = dropOldestHalf(next, turns);
    if (payloadTokens(next, context) > MAX_TOKENS) {
      turns = groupTurns(next);
      next = turns.length < 5 ? textCompression(next, turns) : dropOldestHalf(next, turns);
    }
    if (payloadTokens(next, context) + context.window.reservedOutput > context.window.contextWindow)
      next = emergency(next, context);
    if (next === messages) return messages;
    return commitCompaction(messages, next, context, "turn or token budget", false);
  },
};
