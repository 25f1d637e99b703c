import { z } from "zod";
import type { ToolDefinition } from "../../engine/prepared-request.ts";
import { promptCacheKeyFor } from "../../formats/providers/ai-sdk/prompt-caching.ts";
import type { JsonValue } from "../../model/message.ts";
import { validate } from "../../model/schemas.ts";
import type { UpstreamOptions } from "../upstream/upstream-options.ts";

/** The fields of a chat completions request the proxy reads; every other field is forwarded untouched. */
export const chatRequestSchema = z.looseObject({
  messages: z.array(z.unknown()).min(1, "send at least one message"),
  model: z.string().min(1).optional(),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  tools: z.array(z.unknown()).nullish(),
});

/** A parsed chat completions request. */
export type ChatRequest = z.output<typeof chatRequestSchema>;

/**
 * Validates the body of `POST /v1/chat/completions`.
 *
 * @example
 * const request = parseChatRequest(await c.req.json());
 */
export function parseChatRequest(body: unknown): ChatRequest {
  return validate(chatRequestSchema, body, "chat completions request");
}

type JsonRecord = Record<string, unknown>;
const asRecord = (value: unknown): JsonRecord | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonRecord) : undefined;

/**
 * The request's tools as ctxkit tool definitions (function and custom tools), so their tokens count against
 * the window.
 *
 * @example
 * toolDefinitions([{ type: "function", function: { name: "ls", parameters: { type: "object" } } }]);
 * // [{ name: "ls", inputSchema: { type: "object" } }]
 */
export function toolDefinitions(tools: readonly unknown[] | null | undefined): ToolDefinition[] {
  const definitions: ToolDefinition[] = [];
  for (const tool of tools ?? []) {
    const entry = asRecord(tool);
    const spec = asRecord(entry?.["function"]) ?? asRecord(entry?.["custom"]);
    if (spec === undefined || typeof spec["name"] !== "string") continue;
    definitions.push({
      name: spec["name"],
      ...(typeof spec["description"] === "string" && { description: spec["description"] }),
      ...(spec["parameters"] !== undefined && { inputSchema: spec["parameters"] as JsonValue }),
    });
  }
  return definitions;
}

/**
 * The body sent upstream: the client's fields with the governed messages, the server's model when it has one,
 * and, for streams, usage requested (so the reply's usage can be recorded).
 *
 * @example
 * const body = upstreamBody(request, messages, "gpt-4.1-mini");
 */
export function upstreamBody(
  request: ChatRequest,
  messages: readonly unknown[],
  model: string | undefined,
): JsonRecord {
  const body: JsonRecord = { ...request, messages };
  if (model !== undefined) body["model"] = model;
  if (request.stream === true) body["stream_options"] = { ...request.stream_options, include_usage: true };
  return body;
}

/**
 * An upstream body with OpenAI's `prompt_cache_key` set to the session's key (`promptCacheKeyFor`) when the
 * upstream has `promptCacheKey: true` and the client set none.
 *
 * @example
 * withPromptCacheKey(body, session.id, { promptCacheKey: true }); // { ...body, prompt_cache_key: "chat-1" }
 */
export function withPromptCacheKey(
  body: unknown,
  sessionId: string,
  upstream: Pick<UpstreamOptions, "promptCacheKey">,
): unknown {
  const record = asRecord(body);
  if (record === undefined || upstream.promptCacheKey !== true || record["prompt_cache_key"] != null)
    return body;
  return { ...record, prompt_cache_key: promptCacheKeyFor(sessionId) };
}
