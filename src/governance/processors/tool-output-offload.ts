import { z } from "zod";
import { validate } from "../../model/schemas.ts";
import type { ContentBlock, Message, ToolCallBlock } from "../../model/message.ts";
import { outputKind } from "../../metrics/context-kind.ts";
import { computeBoundaries, isGovernable, newestUnprotected, offloadThresholds } from "../boundaries.ts";
import type { Processor, ProcessorContext } from "../processor.ts";
import { sumTokens } from "../processor.ts";
import { withContent } from "../rewrite.ts";
import { AHEAD_LOOKBACK, AHEAD_WALK, AheadScan } from "../ahead-scan.ts";
import { RewriteMemo } from "../rewrite-memo.ts";
import {
  isShellOutput,
  outputPreview,
  resultsOf,
  toolMessageText,
  type PreviewFocus,
} from "../tool-output-text.ts";
import { RECALL_TOOL_NAME } from "../recall-tool.ts";
import { toolCallLabel } from "../../metrics/tool-call-label.ts";
import { neededContext } from "../needed-context.ts";

/** Outputs smaller than this are not worth a reference and a preview: offloading never changes them. */
export const MIN_OFFLOAD_TOKENS = 400;

/** What a preview of each kind of output keeps of its hidden part: the lines agents act on next. */
const PREVIEW_FOCUS: Readonly<Record<ReturnType<typeof outputKind>, PreviewFocus>> = {
  read: "outline",
  search: "matches",
  edit: "errors",
  shell: "errors",
  other: "errors",
};

/**
 * `message` with its outputs replaced by previews and notices naming their references, which `refOf` gives: the
 * store's `putText` at a checkpoint, its `refFor` when prepared ahead.
 */
async function offloadMessage(
  message: Message,
  context: ProcessorContext,
  calls: ReadonlyMap<string, ToolCallBlock>,
  previewLines: number,
  memo: RewriteMemo,
  refOf: (text: string) => string | Promise<string>,
): Promise<Message> {
  // At a checkpoint each output goes to the store every time (the store decides what a reference means); what is
  // made of it (the preview, the notice) is made once per output and reference.
  const stored = new Map<ContentBlock, { text: string; ref: string }>();
  const key: string[] = [String(context.recall !== false)];
  for (const block of message.content) {
    if (block.type !== "tool-result" || block.offloadRef !== undefined) continue;
    const text = toolMessageText({ ...message, content: [block] });
    const ref = await refOf(text);
    stored.set(block, { text, ref });
    const call = calls.get(block.callId);
    key.push(ref, call === undefined ? "" : outputKind(call));
    if (context.recall === false && call !== undefined) key.push(toolCallLabel(call));
  }
  const known = memo.get(message, key.join("\0"));
  if (known !== undefined) return known;
  const content: ContentBlock[] = [];
  for (const block of message.content) {
    const output = stored.get(block);
    if (block.type !== "tool-result" || output === undefined) {
      content.push(block);
      continue;
    }
    const { text, ref } = output;
    const call = calls.get(block.callId);
    const focus = call === undefined ? "errors" : PREVIEW_FOCUS[outputKind(call)];
    const preview = outputPreview(text, previewLines, isShellOutput(block, text), focus);
    const lines = text.split("\n").length;
    content.push({
      ...block,
      content:
        `${preview}\n[output offloaded: ${text.length} characters, ${lines} lines; ` +
        (context.recall === false
          ? // An agent that cannot recall (a proxy's client) is told the exact call that reads it again with its own
            // tools: one step, as a recall would be.
            `the rest is kept outside the conversation: run ${call === undefined ? "the tool" : toolCallLabel(call)} again if you need it]`
          : `call ${RECALL_TOOL_NAME}("${ref}", offset, limit) to read it]`),
      offloadRef: ref,
    });
  }
  return memo.set(message, withContent(message, content), key.join("\0"));
}

const NAME = "offload-tool-outputs";
const optionsSchema = z.strictObject({
  /**
   * Offload only when at least this many tool tokens are prunable (capped at 10% of the usable window); also the
   * pile of tool output past the protection window that takes an optional checkpoint.
   */
  minPrunableTokens: z.number().int().positive(),
  /** Lines of head and tail kept in an offloaded output's preview. */
  previewLines: z.number().int().positive().default(5),
});

/** Options of `createOffloadToolOutputs`. */
export type OffloadToolOutputsOptions = z.input<typeof optionsSchema>;

/** Share of the usable window that caps `minPrunableTokens`. */
const MIN_PRUNABLE_WINDOW_SHARE = 0.1;

async function offload(
  options: z.output<typeof optionsSchema>,
  messages: readonly Message[],
  context: ProcessorContext,
  memo: RewriteMemo,
): Promise<readonly Message[]> {
  if (context.offloadStore === undefined) return messages;
  const { protect } = offloadThresholds(context);
  const minPrunable = Math.min(
    options.minPrunableTokens,
    Math.floor(context.window.usable * MIN_PRUNABLE_WINDOW_SHARE),
  );
  const boundaries = computeBoundaries(messages, context.tokensOf, protect);
  const needed = neededContext(messages, context);
  const candidates: number[] = [];
  let prunable = 0;
  messages.forEach((message, index) => {
    if (message.role !== "tool" || index >= boundaries.protectedToolsFrom) return;
    if (!isGovernable(index, boundaries) || needed.has(index)) return;
    if (resultsOf(message).every((result) => result.offloadRef !== undefined)) return;
    const tokens = context.tokensOf(message);
    if (tokens < MIN_OFFLOAD_TOKENS) return;
    candidates.push(index);
    prunable += tokens;
  });
  if (candidates.length === 0 || prunable < minPrunable) return messages;
  const output = [...messages];
  const refs: string[] = [];
  const calls = new Map<string, ToolCallBlock>();
  for (const message of messages)
    for (const block of message.content) if (block.type === "tool-call") calls.set(block.id, block);
  const store = context.offloadStore;
  for (const index of candidates) {
    const replacement = await offloadMessage(
      messages[index]!,
      context,
      calls,
      options.previewLines,
      memo,
      (text) => store.putText(text),
    );
    output[index] = replacement;
    for (const result of resultsOf(replacement)) if (result.offloadRef) refs.push(result.offloadRef);
  }
  const originals = candidates.map((index) => messages[index]!);
  context.emit({
    type: "tool-output-offloaded",
    tokensBefore: prunable,
    tokensAfter: sumTokens(
      candidates.map((index) => output[index]!),
      context.tokensOf,
    ),
    messageIds: originals.map((message) => message.id),
    refs,
  });
  return output;
}

/** The tool calls the results of `messages[index]` answer, looked for in the messages before it. */
function callsBefore(messages: readonly Message[], index: number): Map<string, ToolCallBlock> {
  const wanted = new Set(resultsOf(messages[index]!).map((result) => result.callId));
  const calls = new Map<string, ToolCallBlock>();
  for (let before = index - 1; before >= 0 && before >= index - AHEAD_LOOKBACK && wanted.size > 0; before--) {
    for (const block of messages[before]!.content) {
      if (block.type === "tool-call" && wanted.delete(block.id)) calls.set(block.id, block);
    }
  }
  return calls;
}

/**
 * Builds the replacements of the outputs that just left the protection window, a couple per request, under the
 * references the store will give them (`refFor`), so the checkpoint that offloads them finds them made (`memo`)
 * and counted instead of making all of them at once; returns them to be counted. Nothing is stored and the view is
 * not changed.
 */
async function prepareAhead(
  options: z.output<typeof optionsSchema>,
  messages: readonly Message[],
  context: ProcessorContext,
  memo: RewriteMemo,
  ahead: AheadScan,
): Promise<Message[]> {
  const store = context.offloadStore;
  if (store?.refFor === undefined) return [];
  const traffic = (message: Message) => (message.role === "tool" ? context.tokensOf(message) : 0);
  const from = newestUnprotected(messages, traffic, offloadThresholds(context).protect, AHEAD_WALK);
  return ahead.build(messages, from, store, "tool", async (message, index) => {
    if (context.tokensOf(message) < MIN_OFFLOAD_TOKENS) return undefined;
    if (resultsOf(message).every((result) => result.offloadRef !== undefined)) return undefined;
    return offloadMessage(
      message,
      context,
      callsBefore(messages, index),
      options.previewLines,
      memo,
      (text) => store.refFor!(text),
    );
  });
}

/**
 * Moves tool outputs outside the protection window (the newest N tool tokens) to the offload store, leaving a
 * preview and a reference the agent can read back with `recall_tool_output`. Runs at every checkpoint, offloading
 * only when enough tokens are prunable to be worth a cache rewrite, and takes an optional checkpoint once that
 * much tool output piled up. Throws `ValidationError` for bad options.
 *
 * @example
 * const pipeline = createPipeline({ processors: [createOffloadToolOutputs({ minPrunableTokens: 3_000 })] });
 */
export function createOffloadToolOutputs(options: OffloadToolOutputsOptions): Processor {
  const resolved = validate(optionsSchema, options, `${NAME} options`);
  const memo = new RewriteMemo();
  const ahead = new AheadScan();
  return {
    name: NAME,
    options: resolved,
    offloads: true,
    triggers: [
      { kind: "checkpoint" },
      { kind: "tool-output", tokens: resolved.minPrunableTokens, windowShare: MIN_PRUNABLE_WINDOW_SHARE },
    ],
    process: (messages, context) => offload(resolved, messages, context, memo),
    prepareAhead: (messages, context) => prepareAhead(resolved, messages, context, memo, ahead),
  };
}
