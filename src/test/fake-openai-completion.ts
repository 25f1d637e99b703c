import type { FakeCompletion, FakeUsage } from "./fake-openai-responses.ts";

/** The parts of a request the answer depends on. */
export interface CompletionContext {
  readonly id: string;
  readonly created: number;
  readonly model: string;
  /** Index of the request, for default tool call ids. */
  readonly requestIndex: number;
  /** Characters of the request's messages, for the usage estimate. */
  readonly promptCharacters: number;
}

interface WireToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

function wireToolCalls(completion: FakeCompletion, context: CompletionContext): WireToolCall[] {
  return (completion.toolCalls ?? []).map((call, position) => ({
    id: call.id ?? `call_${context.requestIndex}_${position}`,
    type: "function",
    function: {
      name: call.name,
      arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {}),
    },
  }));
}

function finishReason(completion: FakeCompletion): string {
  return completion.finishReason ?? (completion.toolCalls?.length ? "tool_calls" : "stop");
}

/** OpenAI's usage object; figures not given are estimated at one token per 4 characters. */
export function wireUsage(completion: FakeCompletion, context: CompletionContext): Record<string, unknown> {
  const usage: FakeUsage = completion.usage ?? {};
  const outputCharacters =
    (completion.text ?? "").length +
    (completion.reasoning ?? "").length +
    wireToolCalls(completion, context).reduce(
      (sum, call) => sum + call.function.name.length + call.function.arguments.length,
      0,
    );
  const promptTokens = usage.promptTokens ?? Math.ceil(context.promptCharacters / 4);
  const completionTokens = usage.completionTokens ?? Math.ceil(outputCharacters / 4);
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedTokens ?? 0 },
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
  };
}

/**
 * The body of a non-streaming Chat Completions answer.
 *
 * @example
 * completionBody({ text: "hi" }, context).choices[0].message.content // "hi"
 */
export function completionBody(completion: FakeCompletion, context: CompletionContext) {
  const toolCalls = wireToolCalls(completion, context);
  return {
    id: context.id,
    object: "chat.completion",
    created: context.created,
    model: completion.model ?? context.model,
    system_fingerprint: null,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: completion.text ?? null,
          refusal: null,
          ...(completion.reasoning !== undefined && { reasoning_content: completion.reasoning }),
          ...(toolCalls.length > 0 && { tool_calls: toolCalls }),
        },
        logprobs: null,
        finish_reason: finishReason(completion),
      },
    ],
    usage: wireUsage(completion, context),
  };
}

function pieces(text: string, size: number): string[] {
  const parts: string[] = [];
  for (let start = 0; start < text.length; start += size) parts.push(text.slice(start, start + size));
  return parts;
}

/**
 * The chunks of a streaming answer, in OpenAI's order: role, reasoning deltas, content deltas, each tool call
 * (id and name first, then argument pieces), the finish reason, and — when `includeUsage` — a last chunk with
 * empty `choices` and the usage (every other chunk then carries `usage: null`).
 *
 * @example
 * completionChunks({ text: "hello" }, context, { includeUsage: true }).length // 4
 */
export function completionChunks(
  completion: FakeCompletion,
  context: CompletionContext,
  options: { includeUsage: boolean },
): Record<string, unknown>[] {
  const size = Math.max(1, completion.chunkSize ?? 8);
  const base = {
    id: context.id,
    object: "chat.completion.chunk",
    created: context.created,
    model: completion.model ?? context.model,
    system_fingerprint: null,
  };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(options.includeUsage && { usage: null }),
  });
  const chunks: Record<string, unknown>[] = [chunk({ role: "assistant", content: "", refusal: null })];
  for (const part of pieces(completion.reasoning ?? "", size))
    chunks.push(chunk({ reasoning_content: part }));
  for (const part of pieces(completion.text ?? "", size)) chunks.push(chunk({ content: part }));
  wireToolCalls(completion, context).forEach((call, index) => {
    chunks.push(
      chunk({
        tool_calls: [
          { index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } },
        ],
      }),
    );
    for (const part of pieces(call.function.arguments, size)) {
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: part } }] }));
    }
  });
  chunks.push(chunk({}, finishReason(completion)));
  if (options.includeUsage) chunks.push({ ...base, choices: [], usage: wireUsage(completion, context) });
  return chunks;
}
