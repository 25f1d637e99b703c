// What the peer policy reimplementations share: the governor settings that hand every decision to their own
// processors, summaries made the same way for all, and small view helpers.
import { summaryBody } from "../../src/governance/processors/compact-history.ts";
import type { GovernancePipeline } from "../../src/governance/pipeline.ts";
import { presetPipelineOf } from "../../src/governance/preset-pipeline.ts";
import type { PresetOptionsInput } from "../../src/governance/preset-options.ts";
import {
  sumTokens,
  type Processor,
  type ProcessorContext,
  type ProcessorTrigger,
} from "../../src/governance/processor.ts";
import { withContent } from "../../src/governance/rewrite.ts";
import { summarizeSafely } from "../../src/governance/summarize-safely.ts";
import { trimmedMarker } from "../../src/summarize/summarize-request-schema.ts";
import { toolResultText } from "../../src/model/blocks.ts";
import type { ContentBlock, Message } from "../../src/model/message.ts";
import { opensTurn } from "../../src/model/turns.ts";

/**
 * The knobs behind a peer policy: compaction triggered before every request, and none of ctxkit's own safety nets
 * (ingest cap, pre-flight, notices, loop detection).
 */
const peerKnobs: PresetOptionsInput = {
  compactionTrigger: 1e-9,
  preflight: false,
  toolResultCapShare: 0,
  budgetExitShare: 0,
  loopRepeatThreshold: 0,
  loopCycleRepeats: 0,
  cacheAware: false,
  offloadMinPrunableTokens: 0,
  elideToolInputsAbove: 0,
  truncateToolResultsAbove: 0,
  smallHistoryTurns: 0,
};

/**
 * A peer policy's pipeline: its processors run at a checkpoint before every request (a payload-share trigger
 * always passed) and decide for themselves; ctxkit's compaction runs only when a request would overflow and on
 * `/compact`; the governor settings leave out ctxkit's safety nets.
 */
export function peerPipeline(processors: readonly Processor[]): GovernancePipeline {
  const knobs = presetPipelineOf(peerKnobs);
  const everyRequest: ProcessorTrigger[] = [{ kind: "checkpoint" }, { kind: "payload-share", share: 1e-9 }];
  const stages = new Set<ProcessorTrigger["kind"]>(["each-message", "overflow", "user-request"]);
  return {
    processors: [
      ...processors.map((processor) =>
        processor.triggers === undefined ? { ...processor, triggers: everyRequest } : processor,
      ),
      ...knobs.processors.flatMap((processor) => {
        const own = (processor.triggers ?? []).filter((trigger) => stages.has(trigger.kind));
        return own.length === 0 ? [] : [{ ...processor, triggers: own }];
      }),
    ],
    settings: knobs.settings,
  };
}

/**
 * Peers' absolute budgets are set for windows of 200k tokens and more: at their users' real windows they apply
 * as documented; in a smaller common window (the same-window comparison) they shrink by this.
 */
export function windowScale(context: ProcessorContext): number {
  return Math.min(1, context.window.contextWindow / 200_000);
}

/** Payload tokens of a view (system prompt and tools included). */
export function payloadTokens(messages: readonly Message[], context: ProcessorContext): number {
  return context.fixedTokens + sumTokens(messages, context.tokensOf);
}

/** The same summary budget for every policy: ctxkit's (6k tokens, at most 10% of the usable window). */
export function summaryBudget(context: ProcessorContext): number {
  return Math.max(200, Math.min(6_000, Math.floor(context.window.usable * 0.1)));
}

/** Index of the newest step's assistant message (the step a request answers), or the length. */
export function newestStepStart(messages: readonly Message[]): number {
  for (let index = messages.length - 1; index >= 0; index--)
    if (messages[index]!.role === "assistant") return index;
  return messages.length;
}

/** Indices of the messages that open a real user turn. */
export function turnStarts(messages: readonly Message[]): number[] {
  const starts: number[] = [];
  messages.forEach((message, index) => {
    if (opensTurn(message)) starts.push(index);
  });
  return starts;
}

/** True at an index where a cut keeps every tool call with its results (a user or assistant message). */
export function safeCut(messages: readonly Message[], index: number): boolean {
  return index >= messages.length || messages[index]!.role !== "tool";
}

/** Every tool-result block of a tool message rewritten by `change` (marked with `mark` so it is done once). */
export function rewriteResults(message: Message, mark: string, change: (text: string) => string): Message {
  const content: ContentBlock[] = message.content.map((block) =>
    block.type === "tool-result"
      ? { ...block, content: change(toolResultText(block.content)), offloadRef: mark }
      : block,
  );
  return withContent(message, content);
}

/** True when a tool message was already rewritten by the policy that uses `mark`. */
export function marked(message: Message, mark: string): boolean {
  return message.content.some((block) => block.type === "tool-result" && block.offloadRef === mark);
}

/** Characters of a tool message's output. */
export function outputChars(message: Message): number {
  let chars = 0;
  for (const block of message.content)
    if (block.type === "tool-result") chars += toolResultText(block.content).length;
  return chars;
}

/**
 * Summarises `replaced` (an earlier summary among them is merged as the previous summary) with the shared
 * summarizer and returns the summary message, standing where the first replaced message stood.
 */
export async function summaryOf(
  replaced: readonly Message[],
  context: ProcessorContext,
  extra = "",
): Promise<Message> {
  const previous = replaced.find((message) => message.kind === "summary");
  const fresh = replaced.filter((message) => message.kind !== "summary");
  const body = await summarizeSafely(
    context,
    {
      messages: fresh,
      maxTokens: summaryBudget(context),
      ...(previous !== undefined && { previousSummary: summaryBody(previous) }),
    },
    trimmedMarker(replaced.length),
  );
  const first = replaced[0]!;
  return Object.freeze({
    id: context.ids("sum"),
    sessionId: first.sessionId,
    seq: first.seq,
    turn: first.turn,
    role: "user",
    kind: "summary",
    content: Object.freeze([
      { type: "text", text: `[Summary of ${replaced.length} earlier messages]\n${body}${extra}` },
    ]),
    createdAt: context.clock().toISOString(),
  } satisfies Message);
}

/**
 * Reports a summarising or turn-dropping checkpoint the way ctxkit's compaction does (the replay counts
 * `compaction-end` events), or a rollback when the result is not smaller.
 */
export function commitCompaction(
  before: readonly Message[],
  after: readonly Message[],
  context: ProcessorContext,
  reason: string,
  guardInflation = true,
): readonly Message[] {
  const tokensBefore = payloadTokens(before, context);
  const tokensAfter = payloadTokens(after, context);
  const kept = new Set(after.map((message) => message.id));
  const messageIds = before.filter((message) => !kept.has(message.id)).map((message) => message.id);
  context.emit({ type: "compaction-start", reason, tokensBefore, tokensAfter: tokensBefore, messageIds });
  if (guardInflation && tokensAfter >= tokensBefore) {
    context.emit({
      type: "compaction-rolled-back",
      reason: "not smaller",
      tokensBefore,
      tokensAfter: tokensBefore,
      messageIds,
    });
    return before;
  }
  context.emit({
    type: "compaction-end",
    summarizer: context.summarizer.name,
    summaryTokens: sumTokens(
      after.filter((message) => message.kind === "summary"),
      context.tokensOf,
    ),
    durationMs: 0,
    tokensBefore,
    tokensAfter,
    messageIds,
  });
  return after;
}
