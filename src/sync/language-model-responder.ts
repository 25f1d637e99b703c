import { streamText, type LanguageModel, type ModelMessage, type ToolSet } from "ai";
import { messageText } from "../model/blocks.ts";
import type { JsonValue } from "../model/message.ts";
import type { ConversationResponder } from "./executor.ts";

/** Options of `languageModelResponder`. */
export interface LanguageModelResponderOptions {
  /** Any AI SDK model: a provider's, a `CliModel`, a `MockLanguageModelV4`. */
  readonly model: LanguageModel;
  /** The conversation agent's system prompt. */
  readonly instructions?: string;
  /**
   * Classification tools (give them no `execute`): a call to one means the request needs an executor. Keep them
   * few; the executor's own tools do not belong here.
   */
  readonly tools?: ToolSet;
}

function asError(failure: unknown): Error {
  if (failure instanceof Error) return failure;
  const detail = typeof failure === "string" ? failure : (JSON.stringify(failure) ?? "no details");
  return new Error(`the conversation model failed: ${detail}`);
}

/**
 * A conversation agent backed by an AI SDK model: streams its text as deltas and reports its tool calls.
 *
 * @example
 * const conversation = languageModelResponder({
 *   model: new CliModel({ command: "claude", args: ["-p"] }),
 *   instructions: "Contop answers chat and hands desktop work to the desktop agent.",
 *   tools: { desktop: tool({ description: "Needs the user's computer", inputSchema: z.object({ task: z.string() }) }) },
 * });
 */
export function languageModelResponder(options: LanguageModelResponderOptions): ConversationResponder {
  return async ({ messages, signal, emit }) => {
    const modelMessages = messages
      .filter((message) => message.role === "user" || message.role === "assistant")
      .map((message): ModelMessage => ({
        role: message.role as "user" | "assistant",
        content: messageText(message),
      }));
    let failure: unknown;
    const result = streamText({
      model: options.model,
      messages: modelMessages,
      abortSignal: signal,
      ...(options.instructions !== undefined && { instructions: options.instructions }),
      ...(options.tools !== undefined && { tools: options.tools }),
      onError: ({ error }) => {
        failure ??= error;
      },
    });
    let text = "";
    for await (const delta of result.textStream) {
      text += delta;
      emit(delta);
    }
    if (failure !== undefined) throw asError(failure);
    const toolCalls = (await result.toolCalls).map((call) => ({
      id: call.toolCallId,
      name: call.toolName,
      input: (call.input ?? {}) as JsonValue,
    }));
    return { text, toolCalls };
  };
}
