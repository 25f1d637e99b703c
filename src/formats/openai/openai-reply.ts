import { functionCallBlock } from "../providers/function-arguments.ts";
import type { ContentBlock, Message, Usage } from "../../model/message.ts";

/** An assistant reply rebuilt from an upstream answer, ready for `session.recordAssistant`. */
export interface AssistantReply {
  readonly content: ContentBlock[];
  readonly usage: Usage | undefined;
  readonly finishReason: string | undefined;
  readonly model: string | undefined;
  /** Data to store with the reply (never sent to a model), e.g. the Responses id it was answered under. */
  readonly metadata?: Message["metadata"];
}

/** A tool call while its chunks arrive. */
export interface ToolCallDraft {
  id: string;
  name: string;
  arguments: string;
  custom: boolean;
}

type JsonRecord = Record<string, unknown>;

const asRecord = (value: unknown): JsonRecord | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonRecord) : undefined;
const asNumber = (value: unknown): number | undefined => (typeof value === "number" ? value : undefined);
const asText = (value: unknown): string => (typeof value === "string" ? value : "");

/**
 * ctxkit usage from an OpenAI `usage` object (`prompt_tokens`, `completion_tokens`, cached and reasoning
 * details); undefined when there is none.
 *
 * @example
 * usageOf({ prompt_tokens: 120, completion_tokens: 8 }); // { input: 120, output: 8 }
 */
export function usageOf(value: unknown): Usage | undefined {
  const usage = asRecord(value);
  if (usage === undefined) return undefined;
  const input = asNumber(usage["prompt_tokens"]);
  const output = asNumber(usage["completion_tokens"]);
  if (input === undefined || output === undefined) return undefined;
  const cacheRead = asNumber(asRecord(usage["prompt_tokens_details"])?.["cached_tokens"]);
  const reasoning = asNumber(asRecord(usage["completion_tokens_details"])?.["reasoning_tokens"]);
  return {
    input,
    output,
    ...(cacheRead !== undefined && cacheRead > 0 && { cacheRead }),
    ...(reasoning !== undefined && reasoning > 0 && { reasoning }),
  };
}

/**
 * The content blocks of a reply: reasoning first, then text, then the refusal (a text block marked `refusal`),
 * then tool calls (function calls with parsed arguments; custom tools with their raw input).
 *
 * @example
 * replyBlocks("", "Done.", []); // [{ type: "text", text: "Done." }]
 */
export function replyBlocks(
  reasoning: string,
  text: string,
  calls: readonly ToolCallDraft[],
  refusal = "",
): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  if (reasoning !== "") blocks.push({ type: "reasoning", text: reasoning });
  if (text !== "") blocks.push({ type: "text", text });
  if (refusal !== "") blocks.push({ type: "text", text: refusal, refusal: true });
  for (const call of calls) {
    blocks.push(
      call.custom
        ? { type: "tool-call", id: call.id, name: call.name, input: call.arguments }
        : functionCallBlock(call.id, call.name, call.arguments === "" ? "{}" : call.arguments),
    );
  }
  if (blocks.length === 0) blocks.push({ type: "text", text: "" });
  return blocks;
}

/**
 * The reply of a non-streamed chat completion (choice 0).
 *
 * @example
 * const reply = replyFromCompletion(await response.json());
 */
export function replyFromCompletion(completion: unknown): AssistantReply {
  const body = asRecord(completion) ?? {};
  const choices = Array.isArray(body["choices"]) ? (body["choices"] as unknown[]) : [];
  const choice = asRecord(choices[0]) ?? {};
  const message = asRecord(choice["message"]) ?? {};
  const text = typeof message["content"] === "string" ? message["content"] : "";
  const reasoning =
    typeof message["reasoning_content"] === "string"
      ? message["reasoning_content"]
      : typeof message["reasoning"] === "string"
        ? message["reasoning"]
        : "";
  const calls: ToolCallDraft[] = [];
  for (const entry of Array.isArray(message["tool_calls"]) ? (message["tool_calls"] as unknown[]) : []) {
    const call = asRecord(entry) ?? {};
    const custom = asRecord(call["custom"]);
    const fn = asRecord(call["function"]) ?? {};
    calls.push({
      id: typeof call["id"] === "string" ? call["id"] : "",
      name: asText(custom?.["name"] ?? fn["name"]),
      arguments: asText(custom?.["input"] ?? fn["arguments"]),
      custom: custom !== undefined,
    });
  }
  const refusal = typeof message["refusal"] === "string" ? message["refusal"] : "";
  return {
    content: replyBlocks(reasoning, text, calls, refusal),
    usage: usageOf(body["usage"]),
    finishReason: typeof choice["finish_reason"] === "string" ? choice["finish_reason"] : undefined,
    model: typeof body["model"] === "string" ? body["model"] : undefined,
  };
}
