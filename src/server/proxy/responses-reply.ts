import type { Usage } from "../../model/message.ts";
import type { AssistantReply } from "../upstream/assistant-reply.ts";
import { replyContent } from "./responses-items.ts";

type JsonRecord = Record<string, unknown>;
const asRecord = (value: unknown): JsonRecord | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonRecord) : undefined;
const asNumber = (value: unknown): number | undefined => (typeof value === "number" ? value : undefined);

/**
 * ctxkit usage from a Responses `usage` object (`input_tokens`, `output_tokens`, cached and reasoning
 * details); undefined when there is none.
 *
 * @example
 * responsesUsage({ input_tokens: 120, output_tokens: 8 }); // { input: 120, output: 8 }
 */
export function responsesUsage(value: unknown): Usage | undefined {
  const usage = asRecord(value);
  const input = asNumber(usage?.["input_tokens"]);
  const output = asNumber(usage?.["output_tokens"]);
  if (input === undefined || output === undefined) return undefined;
  const cacheRead = asNumber(asRecord(usage?.["input_tokens_details"])?.["cached_tokens"]);
  const reasoning = asNumber(asRecord(usage?.["output_tokens_details"])?.["reasoning_tokens"]);
  return {
    input,
    output,
    ...(cacheRead !== undefined && cacheRead > 0 && { cacheRead }),
    ...(reasoning !== undefined && reasoning > 0 && { reasoning }),
  };
}

/**
 * The assistant reply of a Responses `response` object: its output items as content, its usage, status
 * (`completed`, `incomplete`) as the finish reason, and model.
 *
 * @example
 * const reply = replyFromResponse(JSON.parse(await upstream.text()));
 */
export function replyFromResponse(response: unknown): AssistantReply {
  const body = asRecord(response) ?? {};
  const output = Array.isArray(body["output"]) ? (body["output"] as unknown[]) : [];
  return {
    content: replyContent(output),
    usage: responsesUsage(body["usage"]),
    finishReason: typeof body["status"] === "string" ? body["status"] : undefined,
    model: typeof body["model"] === "string" ? body["model"] : undefined,
  };
}
