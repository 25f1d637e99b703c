import { wireUsage, type CompletionContext } from "./fake-openai-completion.ts";
import type { FakeCompletion } from "./fake-openai-responses.ts";

type Item = Record<string, unknown>;

function pieces(text: string, size: number): string[] {
  const parts: string[] = [];
  for (let start = 0; start < text.length; start += size) parts.push(text.slice(start, start + size));
  return parts;
}

/** The content blocks of an answer: thinking (with a signature), text, then tool uses. */
function contentBlocks(completion: FakeCompletion, context: CompletionContext): Item[] {
  const n = context.requestIndex;
  const blocks: Item[] = [];
  if (completion.reasoning !== undefined) {
    const signature = `sig:${Buffer.from(completion.reasoning).toString("base64")}`;
    blocks.push({ type: "thinking", thinking: completion.reasoning, signature });
  }
  if (completion.text !== undefined) blocks.push({ type: "text", text: completion.text });
  (completion.toolCalls ?? []).forEach((call, position) => {
    const input =
      typeof call.arguments === "string" ? (JSON.parse(call.arguments) as unknown) : (call.arguments ?? {});
    blocks.push({ type: "tool_use", id: call.id ?? `toolu_${n}_${position}`, name: call.name, input });
  });
  return blocks;
}

function stopReason(completion: FakeCompletion): string {
  if (completion.finishReason === "length") return "max_tokens";
  return completion.toolCalls?.length ? "tool_use" : "end_turn";
}

/** Anthropic's usage object, estimated like the chat usage when not scripted (cached tokens as cache reads). */
function messagesUsage(completion: FakeCompletion, context: CompletionContext): Item {
  const chat = wireUsage(completion, context) as {
    prompt_tokens: number;
    completion_tokens: number;
    prompt_tokens_details: { cached_tokens: number };
  };
  const cached = chat.prompt_tokens_details.cached_tokens;
  return {
    input_tokens: chat.prompt_tokens - cached,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cached,
    output_tokens: chat.completion_tokens,
  };
}

/**
 * The body of a non-streaming Anthropic Messages answer (`POST /v1/messages`): a `message` with thinking, text
 * and `tool_use` blocks, its stop reason and usage.
 *
 * @example
 * messagesBody({ text: "hi" }, context).content[0].text // "hi"
 */
export function messagesBody(completion: FakeCompletion, context: CompletionContext): Item {
  return {
    id: context.id,
    type: "message",
    role: "assistant",
    model: completion.model ?? context.model,
    content: contentBlocks(completion, context),
    stop_reason: stopReason(completion),
    stop_sequence: null,
    usage: messagesUsage(completion, context),
  };
}

/**
 * The events of a streaming Messages answer, in Anthropic's order: `message_start`, per block
 * `content_block_start`, its deltas (`text_delta`, `thinking_delta` then `signature_delta`, `input_json_delta`)
 * and `content_block_stop`, then `message_delta` (stop reason, output tokens) and `message_stop`.
 *
 * @example
 * messagesEvents({ text: "hello" }, context).at(-1)?.type // "message_stop"
 */
export function messagesEvents(completion: FakeCompletion, context: CompletionContext): Item[] {
  const size = Math.max(1, completion.chunkSize ?? 8);
  const body = messagesBody(completion, context);
  const usage = body["usage"] as Item;
  const events: Item[] = [
    {
      type: "message_start",
      message: { ...body, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
    },
  ];
  (body["content"] as Item[]).forEach((block, index) => {
    if (block["type"] === "text") {
      events.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
      for (const text of pieces(block["text"] as string, size))
        events.push({ type: "content_block_delta", index, delta: { type: "text_delta", text } });
    } else if (block["type"] === "thinking") {
      events.push({
        type: "content_block_start",
        index,
        content_block: { type: "thinking", thinking: "", signature: "" },
      });
      for (const thinking of pieces(block["thinking"] as string, size))
        events.push({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking } });
      events.push({
        type: "content_block_delta",
        index,
        delta: { type: "signature_delta", signature: block["signature"] },
      });
    } else {
      events.push({ type: "content_block_start", index, content_block: { ...block, input: {} } });
      for (const partial_json of pieces(JSON.stringify(block["input"]), size))
        events.push({
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json },
        });
    }
    events.push({ type: "content_block_stop", index });
  });
  events.push({
    type: "message_delta",
    delta: { stop_reason: body["stop_reason"], stop_sequence: null },
    usage: { output_tokens: usage["output_tokens"] },
  });
  events.push({ type: "message_stop" });
  return events;
}
