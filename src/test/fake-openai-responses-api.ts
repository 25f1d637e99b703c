import { wireUsage, type CompletionContext } from "./fake-openai-completion.ts";
import type { FakeCompletion } from "./fake-openai-responses.ts";

type Item = Record<string, unknown>;

function pieces(text: string, size: number): string[] {
  const parts: string[] = [];
  for (let start = 0; start < text.length; start += size) parts.push(text.slice(start, start + size));
  return parts;
}

/** The output items of an answer: reasoning (with encrypted content), the message, then the function calls. */
function outputItems(completion: FakeCompletion, context: CompletionContext): Item[] {
  const n = context.requestIndex;
  const items: Item[] = [];
  if (completion.reasoning !== undefined) {
    items.push({
      id: `rs_fake_${n}`,
      type: "reasoning",
      summary: [{ type: "summary_text", text: completion.reasoning }],
      encrypted_content: `enc:${Buffer.from(completion.reasoning).toString("base64")}`,
    });
  }
  if (completion.text !== undefined) {
    items.push({
      id: `msg_fake_${n}`,
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: completion.text, annotations: [] }],
    });
  }
  (completion.toolCalls ?? []).forEach((call, position) => {
    items.push({
      id: `fc_fake_${n}_${position}`,
      type: "function_call",
      status: "completed",
      call_id: call.id ?? `call_${n}_${position}`,
      name: call.name,
      arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {}),
    });
  });
  return items;
}

/** OpenAI's Responses usage object, estimated like the chat usage when not scripted. */
function responsesUsage(completion: FakeCompletion, context: CompletionContext): Item {
  const chat = wireUsage(completion, context) as {
    prompt_tokens: number;
    completion_tokens: number;
    prompt_tokens_details: { cached_tokens: number };
    completion_tokens_details: { reasoning_tokens: number };
  };
  return {
    input_tokens: chat.prompt_tokens,
    input_tokens_details: { cached_tokens: chat.prompt_tokens_details.cached_tokens },
    output_tokens: chat.completion_tokens,
    output_tokens_details: { reasoning_tokens: chat.completion_tokens_details.reasoning_tokens },
    total_tokens: chat.prompt_tokens + chat.completion_tokens,
  };
}

function responseObject(
  completion: FakeCompletion,
  context: CompletionContext,
  status: "in_progress" | "completed" | "incomplete",
): Item {
  const finished = status !== "in_progress";
  return {
    id: context.id,
    object: "response",
    created_at: context.created,
    status,
    error: null,
    incomplete_details: status === "incomplete" ? { reason: "max_output_tokens" } : null,
    model: completion.model ?? context.model,
    output: finished ? outputItems(completion, context) : [],
    parallel_tool_calls: true,
    store: false,
    usage: finished ? responsesUsage(completion, context) : null,
  };
}

function finalStatus(completion: FakeCompletion): "completed" | "incomplete" {
  return completion.finishReason === "length" ? "incomplete" : "completed";
}

/**
 * The body of a non-streaming Responses answer (`POST /v1/responses`): reasoning, message and function call
 * items, and usage in the Responses shape.
 *
 * @example
 * responsesBody({ text: "hi" }, context).output[0].content[0].text // "hi"
 */
export function responsesBody(completion: FakeCompletion, context: CompletionContext): Item {
  return responseObject(completion, context, finalStatus(completion));
}

/**
 * The events of a streaming Responses answer, in OpenAI's order: `response.created`, `response.in_progress`,
 * per output item `response.output_item.added`, its deltas (`response.output_text.delta`,
 * `response.function_call_arguments.delta`) and `.done` events, `response.output_item.done`, then
 * `response.completed` (or `response.incomplete`) with usage. Each carries its `sequence_number`.
 *
 * @example
 * responsesEvents({ text: "hello" }, context).at(-1)?.type // "response.completed"
 */
export function responsesEvents(completion: FakeCompletion, context: CompletionContext): Item[] {
  const size = Math.max(1, completion.chunkSize ?? 8);
  const events: Item[] = [];
  const push = (type: string, fields: Item) =>
    events.push({ type, sequence_number: events.length, ...fields });
  push("response.created", { response: responseObject(completion, context, "in_progress") });
  push("response.in_progress", { response: responseObject(completion, context, "in_progress") });
  outputItems(completion, context).forEach((item, output_index) => {
    const item_id = item["id"];
    if (item["type"] === "message") {
      const text = ((item["content"] as Item[])[0]?.["text"] as string | undefined) ?? "";
      push("response.output_item.added", {
        output_index,
        item: { ...item, status: "in_progress", content: [] },
      });
      const part = { type: "output_text", text: "", annotations: [] };
      push("response.content_part.added", { item_id, output_index, content_index: 0, part });
      for (const delta of pieces(text, size)) {
        push("response.output_text.delta", { item_id, output_index, content_index: 0, delta, logprobs: [] });
      }
      push("response.output_text.done", { item_id, output_index, content_index: 0, text, logprobs: [] });
      push("response.content_part.done", {
        item_id,
        output_index,
        content_index: 0,
        part: { ...part, text },
      });
    } else if (item["type"] === "function_call") {
      const args = item["arguments"] as string;
      push("response.output_item.added", {
        output_index,
        item: { ...item, status: "in_progress", arguments: "" },
      });
      for (const delta of pieces(args, size)) {
        push("response.function_call_arguments.delta", { item_id, output_index, delta });
      }
      push("response.function_call_arguments.done", { item_id, output_index, arguments: args });
    } else {
      push("response.output_item.added", { output_index, item: { ...item, summary: [] } });
    }
    push("response.output_item.done", { output_index, item });
  });
  const status = finalStatus(completion);
  push(`response.${status}`, { response: responseObject(completion, context, status) });
  return events;
}
