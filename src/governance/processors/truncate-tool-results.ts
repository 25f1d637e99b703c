import { z } from "zod";
import { validate } from "../../model/schemas.ts";
import type { ContentBlock, Message } from "../../model/message.ts";
import { computeBoundaries, isGovernable, offloadThresholds } from "../boundaries.ts";
import type { Processor, ProcessorContext } from "../processor.ts";
import { reportRewrite, withContent } from "../rewrite.ts";
import { RewriteMemo } from "../rewrite-memo.ts";
import { headTail, omissionNotice } from "../truncate-text.ts";
import { resultsOf, toolMessageText } from "../tool-output-text.ts";
import { neededContext } from "../needed-context.ts";

/**
 * Cuts a tool message's results to about `keepTokens` tokens (`headShare` from the start — by default the
 * governor settings' `truncationHeadShare` — the rest from the end), serialising JSON first and keeping tool name and call
 * id. When an offload store is present the full output is stored and referenced, so nothing is lost. With a
 * `memo`, a message cut again to the same size with the same references is the same object as last time.
 */
export async function truncateToolMessage(
  message: Message,
  keepTokens: number,
  context: ProcessorContext,
  headShare: number = context.settings.truncationHeadShare,
  memo?: RewriteMemo,
): Promise<Message> {
  const totalTokens = context.tokensOf(message);
  const text = toolMessageText(message);
  const charsPerToken = text.length / Math.max(1, totalTokens);
  const keepChars = Math.max(200, Math.floor(keepTokens * charsPerToken));
  const cut = new Map<ContentBlock, { text: string; ref: string | undefined }>();
  for (const block of message.content) {
    if (block.type !== "tool-result") continue;
    const blockText = toolMessageText({ ...message, content: [block] });
    if (blockText.length <= keepChars) continue;
    cut.set(block, {
      text: blockText,
      ref: block.offloadRef ?? (await context.offloadStore?.putText(blockText)),
    });
  }
  const key = [keepTokens, totalTokens, headShare, ...[...cut.values()].map(({ ref }) => ref)].join("\0");
  const known = memo?.get(message, key);
  if (known !== undefined) return known;
  const notice = omissionNotice(Math.max(0, totalTokens - keepTokens), totalTokens);
  const content = message.content.map((block): ContentBlock => {
    const output = cut.get(block);
    if (block.type !== "tool-result" || output === undefined) return block;
    return {
      ...block,
      content: headTail(output.text, keepChars, headShare, notice),
      ...(output.ref !== undefined && { offloadRef: output.ref }),
    };
  });
  const replacement = withContent(message, content);
  return memo === undefined ? replacement : memo.set(message, replacement, key);
}

const TRUNCATE = "truncate-tool-results";
const truncateOptionsSchema = z.strictObject({
  /** Older tool results above this many tokens are cut to head + tail. */
  aboveTokens: z.number().int().positive(),
  /** Share of a cut result kept from its head (the rest from its tail). */
  headShare: z.number().min(0).max(1).default(0.2),
});

/** Options of `createTruncateToolResults`. */
export type TruncateToolResultsOptions = z.input<typeof truncateOptionsSchema>;

async function truncateOlder(
  options: z.output<typeof truncateOptionsSchema>,
  messages: readonly Message[],
  context: ProcessorContext,
  memo: RewriteMemo,
): Promise<readonly Message[]> {
  const limit = options.aboveTokens;
  const boundaries = computeBoundaries(messages, context.tokensOf, offloadThresholds(context).protect);
  const needed = neededContext(messages, context);
  let output: Message[] | undefined;
  const originals: Message[] = [];
  const replacements: Message[] = [];
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index]!;
    if (message.role !== "tool" || !isGovernable(index, boundaries)) continue;
    if (index >= boundaries.protectedToolsFrom || needed.has(index)) continue;
    if (context.tokensOf(message) <= limit || resultsOf(message).length === 0) continue;
    const replacement = await truncateToolMessage(message, limit, context, options.headShare, memo);
    if (context.tokensOf(replacement) >= context.tokensOf(message)) continue;
    output ??= [...messages];
    output[index] = replacement;
    originals.push(message);
    replacements.push(replacement);
  }
  if (!output) return messages;
  reportRewrite(context, "tool-output-truncated", { messages: output, originals, replacements });
  return output;
}

/**
 * Truncates older tool results (outside the newest step and the protection window of recent tool output) above
 * `aboveTokens` to head + tail with a `[… N of M tokens omitted …]` notice. Runs at every checkpoint, and takes an
 * optional one once `aboveTokens` of tool output piled up past the protection window. Throws `ValidationError`
 * for bad options.
 *
 * @example
 * const pipeline = createPipeline({ processors: [createTruncateToolResults({ aboveTokens: 4_000 })] });
 */
export function createTruncateToolResults(options: TruncateToolResultsOptions): Processor {
  const resolved = validate(truncateOptionsSchema, options, `${TRUNCATE} options`);
  const memo = new RewriteMemo();
  return {
    name: TRUNCATE,
    options: resolved,
    triggers: [{ kind: "checkpoint" }, { kind: "tool-output", tokens: resolved.aboveTokens }],
    process: (messages, context) => truncateOlder(resolved, messages, context, memo),
  };
}

const CAP = "cap-tool-results";
const capOptionsSchema = z.strictObject({
  /** No single tool result may exceed this share of the usable window, the newest step's included. */
  capShare: z.number().gt(0).max(1),
  /** Share of a capped result kept from its head (the rest from its tail). */
  headShare: z.number().min(0).max(1).default(0.2),
});

/** Options of `createCapToolResults`. */
export type CapToolResultsOptions = z.input<typeof capOptionsSchema>;

async function capResults(
  options: z.output<typeof capOptionsSchema>,
  messages: readonly Message[],
  context: ProcessorContext,
): Promise<readonly Message[]> {
  const cap = Math.floor(options.capShare * context.window.usable);
  if (cap === 0) return messages;
  let output: Message[] | undefined;
  const originals: Message[] = [];
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index]!;
    if (message.role !== "tool" || context.tokensOf(message) <= cap) continue;
    output ??= [...messages];
    output[index] = await truncateToolMessage(message, cap, context, options.headShare);
    originals.push(message);
  }
  if (!output) return messages;
  const replacements = originals.map((original) => output.find((message) => message.id === original.id)!);
  context.emit({
    type: "tool-output-capped",
    tokensBefore: originals.reduce((sum, message) => sum + context.tokensOf(message), 0),
    tokensAfter: replacements.reduce((sum, message) => sum + context.tokensOf(message), 0),
    messageIds: originals.map((message) => message.id),
  });
  return output;
}

/**
 * Caps any single tool result — the newest step's included — at `capShare` of the usable window: a result bigger
 * than that could never be sent. The full output goes to the offload store when there is one. Runs on each new
 * message as it arrives and at every checkpoint. Throws `ValidationError` for bad options.
 *
 * @example
 * const pipeline = createPipeline({ processors: [createCapToolResults({ capShare: 0.5 })] });
 */
export function createCapToolResults(options: CapToolResultsOptions): Processor {
  const resolved = validate(capOptionsSchema, options, `${CAP} options`);
  return {
    name: CAP,
    options: resolved,
    triggers: [{ kind: "each-message" }, { kind: "checkpoint" }],
    process: (messages, context) => capResults(resolved, messages, context),
  };
}

/**
 * Last resort before refusing a request: when even a forced compaction leaves the payload over the window
 * because the newest step's own results are too big, those results share what is left of the budget (each
 * keeps head and tail; the full outputs go to the offload store). The only place protected output is cut — a
 * request that cannot be sent protects nothing.
 */
export async function fitNewestStep(
  messages: readonly Message[],
  budgetTokens: number,
  context: ProcessorContext,
): Promise<readonly Message[]> {
  const newestStep = messages.findLastIndex((message) => message.role === "assistant");
  if (newestStep < 0) return messages;
  const resultIndices: number[] = [];
  for (let index = newestStep + 1; index < messages.length; index++) {
    if (messages[index]!.role === "tool") resultIndices.push(index);
  }
  if (resultIndices.length === 0) return messages;
  const others = messages.reduce(
    (sum, message, index) => sum + (resultIndices.includes(index) ? 0 : context.tokensOf(message)),
    0,
  );
  const output = [...messages];
  // Cutting by characters only approximates tokens: aim a little lower each round until the results fit.
  for (let round = 0, aim = 0.97; round < 4; round++, aim *= 0.9) {
    const share = Math.max(200, Math.floor(((budgetTokens - others) / resultIndices.length) * aim));
    for (const index of resultIndices) {
      const original = messages[index]!;
      if (context.tokensOf(original) <= share) continue;
      const cut = await truncateToolMessage(original, share, context);
      // Just over the share, the omission notice can outweigh what is cut: keep the original then.
      if (context.tokensOf(cut) < context.tokensOf(original)) output[index] = cut;
    }
    if (
      others + resultIndices.reduce((sum, index) => sum + context.tokensOf(output[index]!), 0) <=
      budgetTokens
    )
      break;
  }
  const changed = resultIndices.filter((index) => output[index] !== messages[index]);
  if (changed.length === 0) return messages;
  context.emit({
    type: "tool-output-capped",
    tokensBefore: changed.reduce((sum, index) => sum + context.tokensOf(messages[index]!), 0),
    tokensAfter: changed.reduce((sum, index) => sum + context.tokensOf(output[index]!), 0),
    messageIds: changed.map((index) => messages[index]!.id),
  });
  return output;
}
