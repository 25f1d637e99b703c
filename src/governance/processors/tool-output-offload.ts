import type { ContentBlock, Message, ToolCallBlock } from "../../model/message.ts";
import { outputKind } from "../../metrics/context-kind.ts";
import { computeBoundaries, isGovernable, offloadThresholds } from "../boundaries.ts";
import type { Processor, ProcessorContext } from "../processor.ts";
import { sumTokens } from "../processor.ts";
import { withContent } from "../rewrite.ts";
import {
  isShellOutput,
  outputPreview,
  resultsOf,
  toolMessageText,
  type PreviewFocus,
} from "../tool-output-text.ts";
import { RECALL_TOOL_NAME } from "../recall-tool.ts";
import { neededContext } from "../needed-context.ts";

/** Outputs smaller than this are not worth a reference and a preview. */
const MIN_OFFLOAD_TOKENS = 400;

/** What a preview of each kind of output keeps of its hidden part: the lines agents act on next. */
const PREVIEW_FOCUS: Readonly<Record<ReturnType<typeof outputKind>, PreviewFocus>> = {
  read: "outline",
  search: "matches",
  edit: "errors",
  shell: "errors",
  other: "errors",
};

async function offloadMessage(
  message: Message,
  context: ProcessorContext,
  calls: ReadonlyMap<string, ToolCallBlock>,
): Promise<Message> {
  const content: ContentBlock[] = [];
  for (const block of message.content) {
    if (block.type !== "tool-result" || block.offloadRef !== undefined) {
      content.push(block);
      continue;
    }
    const text = toolMessageText({ ...message, content: [block] });
    const ref = await context.offloadStore!.putText(text);
    const call = calls.get(block.callId);
    const focus = call === undefined ? "errors" : PREVIEW_FOCUS[outputKind(call)];
    const preview = outputPreview(
      text,
      context.policy.offloadPreviewLines,
      isShellOutput(block, text),
      focus,
    );
    const lines = text.split("\n").length;
    content.push({
      ...block,
      content:
        `${preview}\n[output offloaded: ${text.length} characters, ${lines} lines; ` +
        `call ${RECALL_TOOL_NAME}("${ref}", offset, limit) to read it]`,
      offloadRef: ref,
    });
  }
  return withContent(message, content);
}

/**
 * Moves tool outputs outside the protection window (the newest N tool tokens) to the offload store, leaving a
 * preview and a reference the agent can read back with `recall_tool_output`. Runs only when enough tokens are
 * prunable to be worth a cache rewrite.
 */
export const offloadToolOutputs: Processor = {
  name: "offload-tool-outputs",
  async process(messages, context) {
    const { protect, minPrunable } = offloadThresholds(context);
    if (context.policy.offloadMinPrunableTokens === 0 || context.offloadStore === undefined) return messages;
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
    for (const index of candidates) {
      const replacement = await offloadMessage(messages[index]!, context, calls);
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
  },
};
