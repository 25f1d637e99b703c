// Anthropic's server-side context editing, reimplemented from its documentation (the Messages API's
// `context_management.edits: [{ type: "clear_tool_uses_20250919" }]`, documented defaults): when a request's
// input passes 100,000 tokens, the API replaces the results of all tool uses but the newest 3 with a
// placeholder before the model reads them; tool inputs are kept (`clear_tool_inputs: false`), no tool is
// excluded, and `clear_at_least` is unset. The client still sends its whole history: the trigger is measured
// on that, not on what is left after clearing. Clearing rewrites the prompt from the first cleared result, so
// the cached prefix is lost from there — what `clear_at_least` exists to make worth it. This is not Anthropic's
// code: it is a reimplementation of the documented behaviour, labelled so in the bench.
import type { Processor } from "../../src/governance/processor.ts";
import type { Message } from "../../src/model/message.ts";
import { marked, payloadTokens, rewriteResults } from "./peer-support.ts";

const CLEARED = "anthropic:cleared";
const TRIGGER_TOKENS = 100_000;
const KEEP_TOOL_USES = 3;
/** What the model reads instead of a cleared result. */
const PLACEHOLDER = "[Tool result cleared by context management]";

/** Tokens a cleared message had before it was cleared: the client still sends them. */
const originalTokens = new WeakMap<Message, number>();

/** Input tokens of the request as the client sends it (cleared results counted at their original size). */
function sentTokens(messages: readonly Message[], context: Parameters<Processor["process"]>[1]): number {
  let tokens = payloadTokens(messages, context);
  for (const message of messages) {
    const original = originalTokens.get(message);
    if (original !== undefined) tokens += original - context.tokensOf(message);
  }
  return tokens;
}

/** `clear_tool_uses_20250919` at its defaults: past 100k input tokens, clear all tool results but the newest 3. */
export const anthropicClearToolUses: Processor = {
  name: "anthropic-clear-tool-uses",
  process(messages, context) {
    if (sentTokens(messages, context) <= TRIGGER_TOKENS) return messages;
    let kept = 0;
    let output: Message[] | undefined;
    for (let index = messages.length - 1; index >= 0; index--) {
      const message = messages[index]!;
      if (message.role !== "tool") continue;
      if (kept < KEEP_TOOL_USES) {
        kept += message.content.filter((block) => block.type === "tool-result").length;
        continue;
      }
      if (marked(message, CLEARED)) continue;
      output ??= [...messages];
      const cleared = rewriteResults(message, CLEARED, () => PLACEHOLDER);
      originalTokens.set(cleared, originalTokens.get(message) ?? context.tokensOf(message));
      output[index] = cleared;
    }
    return output ?? messages;
  },
};
