import type { ContentBlock, JsonValue, Usage } from "../../model/message.ts";
import { ANTHROPIC_PROVIDER } from "../../formats/providers/anthropic/anthropic-message.ts";
import type { AssistantReply } from "../upstream/assistant-reply.ts";

type JsonRecord = Record<string, unknown>;
type JsonObject = { [key: string]: JsonValue };
const asRecord = (value: unknown): JsonRecord | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonRecord) : undefined;
const asNumber = (value: unknown): number => (typeof value === "number" ? value : 0);
const asText = (value: unknown): string => (typeof value === "string" ? value : "");

/**
 * ctxkit usage from an Anthropic `usage` object: `input` counts every prompt token (uncached, read from and
 * written to the cache), as ctxkit's `Usage` does; undefined when there is none.
 *
 * @example
 * anthropicUsage({ input_tokens: 20, cache_read_input_tokens: 1000, output_tokens: 8 });
 * // { input: 1020, output: 8, cacheRead: 1000 }
 */
export function anthropicUsage(value: unknown): Usage | undefined {
  const usage = asRecord(value);
  if (usage === undefined || typeof usage["input_tokens"] !== "number") return undefined;
  const cacheRead = asNumber(usage["cache_read_input_tokens"]);
  const cacheWrite = asNumber(usage["cache_creation_input_tokens"]);
  const cacheWriteLong = asNumber(asRecord(usage["cache_creation"])?.["ephemeral_1h_input_tokens"]);
  return {
    input: usage["input_tokens"] + cacheRead + cacheWrite,
    output: asNumber(usage["output_tokens"]),
    ...(cacheRead > 0 && { cacheRead }),
    ...(cacheWrite > 0 && { cacheWrite }),
    ...(cacheWriteLong > 0 && { cacheWriteLong }),
  };
}

function replyBlock(value: unknown): ContentBlock | undefined {
  const block = asRecord(value);
  switch (block?.["type"]) {
    case "text":
      return { type: "text", text: asText(block["text"]) };
    case "thinking":
      return {
        type: "reasoning",
        text: asText(block["thinking"]),
        ...(typeof block["signature"] === "string" && { signature: block["signature"] }),
      };
    case "redacted_thinking":
      return { type: "reasoning", text: "", redacted: true, signature: asText(block["data"]) };
    case "tool_use":
      return {
        type: "tool-call",
        id: asText(block["id"]),
        name: asText(block["name"]),
        input: (asRecord(block["input"]) ?? {}) as JsonValue,
      };
    default:
      // A server tool's call or result (web search, code execution, MCP, …) or a newer block: kept as it came,
      // so the next request sends the whole reply back (a server_tool_use must stay next to its result).
      return typeof block?.["type"] === "string" && block["type"] !== ""
        ? { type: "opaque", provider: ANTHROPIC_PROVIDER, data: block as JsonObject }
        : undefined;
  }
}

/**
 * The assistant reply of an Anthropic Messages answer (a `message` object): its content blocks, usage, stop
 * reason and model. Blocks ctxkit does not model (a server tool's call and result, …) are kept as opaque blocks
 * of provider `anthropic`, at their place.
 *
 * @example
 * const reply = replyFromAnthropic(JSON.parse(await upstream.text()));
 */
export function replyFromAnthropic(message: unknown): AssistantReply {
  const body = asRecord(message) ?? {};
  const content = (Array.isArray(body["content"]) ? (body["content"] as unknown[]) : []).flatMap((block) => {
    const converted = replyBlock(block);
    return converted === undefined ? [] : [converted];
  });
  return {
    content: content.length > 0 ? content : [{ type: "text", text: "" }],
    usage: anthropicUsage(body["usage"]),
    finishReason: typeof body["stop_reason"] === "string" ? body["stop_reason"] : undefined,
    model: typeof body["model"] === "string" ? body["model"] : undefined,
  };
}

/**
 * Rebuilds the `message` object of an Anthropic Messages stream from its events (`message_start`,
 * `content_block_start`/`_delta`/`_stop`, `message_delta`), as the non-streamed answer would have been.
 *
 * @example
 * const accumulator = new AnthropicStreamAccumulator();
 * for (const event of events) accumulator.push(event);
 * replyFromAnthropic(accumulator.message());
 */
export class AnthropicStreamAccumulator {
  #message: JsonRecord = {};
  readonly #blocks: JsonRecord[] = [];
  readonly #json = new Map<number, string>();

  /** Takes one parsed event (its `data`). */
  push(event: JsonRecord): void {
    const index = typeof event["index"] === "number" ? event["index"] : -1;
    switch (event["type"]) {
      case "message_start":
        this.#message = { ...asRecord(event["message"]) };
        break;
      case "content_block_start":
        this.#blocks[index] = { ...asRecord(event["content_block"]) };
        break;
      case "content_block_delta": {
        const block = this.#blocks[index];
        const delta = asRecord(event["delta"]);
        if (block === undefined || delta === undefined) break;
        if (delta["type"] === "text_delta") block["text"] = asText(block["text"]) + asText(delta["text"]);
        else if (delta["type"] === "thinking_delta")
          block["thinking"] = asText(block["thinking"]) + asText(delta["thinking"]);
        else if (delta["type"] === "signature_delta")
          block["signature"] = asText(block["signature"]) + asText(delta["signature"]);
        else if (delta["type"] === "input_json_delta")
          this.#json.set(index, (this.#json.get(index) ?? "") + asText(delta["partial_json"]));
        break;
      }
      case "content_block_stop": {
        const json = this.#json.get(index);
        const block = this.#blocks[index];
        if (json !== undefined && block !== undefined) block["input"] = json === "" ? {} : JSON.parse(json);
        break;
      }
      case "message_delta": {
        const delta = asRecord(event["delta"]) ?? {};
        const usage = { ...asRecord(this.#message["usage"]), ...asRecord(event["usage"]) };
        this.#message = { ...this.#message, ...delta, usage };
        break;
      }
    }
  }

  /** The message as rebuilt so far. */
  message(): JsonRecord {
    return { ...this.#message, content: this.#blocks.filter((block) => block !== undefined) };
  }
}
