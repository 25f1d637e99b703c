import { currentTurnStart } from "../../model/turns.ts";
import { z } from "zod";
import { validate } from "../../model/schemas.ts";
import type { Message } from "../../model/message.ts";
import { AT_EVERY_CHECKPOINT, type Processor, type ProcessorContext } from "../processor.ts";
import { mapMessages, reportRewrite, withContent } from "../rewrite.ts";
import { RewriteMemo } from "../rewrite-memo.ts";

const NAME = "strip-older-reasoning";
const optionsSchema = z.strictObject({});

/** Options of `createStripOlderReasoning` (none yet: present in a pipeline means on). */
export type StripOlderReasoningOptions = z.input<typeof optionsSchema>;

function strip(
  messages: readonly Message[],
  context: ProcessorContext,
  memo: RewriteMemo,
): readonly Message[] {
  const turnStart = currentTurnStart(messages);
  const result = mapMessages(messages, (message, index) => {
    if (index >= turnStart || !message.content.some((block) => block.type === "reasoning")) return undefined;
    const stripped = memo.get(message) ?? memo.set(message, withoutReasoning(message));
    // Reasoning that weighs nothing (a signature, an empty thought) is left: removing it would change the
    // cached prefix from this message on and save nothing.
    if (stripped.content.length > 0 && context.tokensOf(stripped) >= context.tokensOf(message))
      return undefined;
    return stripped;
  });
  if (result.originals.length === 0) return messages;
  reportRewrite(context, "reasoning-stripped", result);
  // An assistant message that held only reasoning is now empty: drop it (it answers nothing, pairs with nothing).
  return result.messages.filter((message) => message.content.length > 0);
}

/** New messages looked at per request, at most, for reasoning to strip later. */
const AHEAD_LOOKBACK = 8;

/**
 * Strips, as they arrive, the reasoning of new assistant messages, which a checkpoint strips once their turn is
 * over: it then finds them made (`memo`) and counted. Returns them to be counted; nothing in the view changes.
 */
function prepareAhead(messages: readonly Message[], memo: RewriteMemo, looked: WeakSet<Message>): Message[] {
  const built: Message[] = [];
  for (let index = messages.length - 1; index >= 0 && index >= messages.length - AHEAD_LOOKBACK; index--) {
    const message = messages[index]!;
    if (looked.has(message)) break;
    looked.add(message);
    if (message.role !== "assistant" || !message.content.some((block) => block.type === "reasoning"))
      continue;
    built.push(memo.get(message) ?? memo.set(message, withoutReasoning(message)));
  }
  return built;
}

function withoutReasoning(message: Message): Message {
  return withContent(
    message,
    message.content.filter((block) => block.type !== "reasoning"),
  );
}

/**
 * Removes reasoning blocks from turns before the current one: providers do not need old thoughts, and they are
 * often thousands of tokens. The current turn keeps its reasoning (some providers require it inside a tool loop).
 * Runs at every checkpoint.
 *
 * @example
 * const pipeline = createPipeline({ processors: [createStripOlderReasoning()] });
 */
export function createStripOlderReasoning(options: StripOlderReasoningOptions = {}): Processor {
  validate(optionsSchema, options, `${NAME} options`);
  const memo = new RewriteMemo();
  const looked = new WeakSet<Message>();
  return {
    name: NAME,
    triggers: AT_EVERY_CHECKPOINT,
    process: (messages, context) => strip(messages, context, memo),
    prepareAhead: (messages) => prepareAhead(messages, memo, looked),
  };
}
