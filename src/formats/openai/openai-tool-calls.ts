import type { ContentBlock, Usage } from "../../model/message.ts";
import { replyFromCompletion } from "./openai-reply.ts";

/** An assistant reply from OpenAI, as `session.recordAssistant` takes it. */
export interface OpenAIAssistantReply {
  /** Text, the refusal (a text block marked `refusal`) and tool calls, in that order. */
  readonly content: ContentBlock[];
  readonly usage?: Usage;
  readonly model?: string;
  readonly finishReason?: string;
}

/**
 * The reply of a Chat Completions response (choice 0) as ctxkit content, with its usage (cached and reasoning
 * tokens included), model and finish reason: pass it to `session.recordAssistant`. Each of `message.tool_calls`
 * becomes a `tool-call` block with its parsed arguments (arguments that are not JSON are kept as their text).
 *
 * @example
 * const completion = await openai.chat.completions.create({ model, messages, tools });
 * await session.recordAssistant(fromOpenAIChatCompletion(completion));
 */
export function fromOpenAIChatCompletion(completion: unknown): OpenAIAssistantReply {
  const reply = replyFromCompletion(completion);
  return {
    content: reply.content,
    ...(reply.usage !== undefined && { usage: reply.usage }),
    ...(reply.model !== undefined && { model: reply.model }),
    ...(reply.finishReason !== undefined && { finishReason: reply.finishReason }),
  };
}

/**
 * The content of one Chat Completions assistant message (`completion.choices[0].message`): its text, refusal and
 * `tool_calls` as ctxkit blocks.
 *
 * @example
 * fromOpenAIToolCalls({ role: "assistant", content: null, tool_calls: [
 *   { id: "c1", type: "function", function: { name: "ls", arguments: '{"path":"."}' } },
 * ] }); // [{ type: "tool-call", id: "c1", name: "ls", input: { path: "." } }]
 */
export function fromOpenAIToolCalls(message: unknown): ContentBlock[] {
  return replyFromCompletion({ choices: [{ message }] }).content;
}
