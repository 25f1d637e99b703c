import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { ToolDefinition } from "../../engine/prepared-request.ts";
import type { JsonValue } from "../../model/message.ts";
import { HttpError } from "../http/http-error.ts";

/** The fields of a Responses request the proxy reads; every other field is forwarded untouched. */
export const responsesRequestSchema = z.looseObject({
  input: z.union([
    z.string().min(1, "send some input"),
    z.array(z.unknown()).min(1, "send at least one item"),
  ]),
  instructions: z.string().nullish(),
  model: z.string().min(1).optional(),
  stream: z.boolean().nullish(),
  store: z.boolean().nullish(),
  previous_response_id: z.string().nullish(),
  tools: z.array(z.unknown()).nullish(),
});

/** A parsed Responses request. */
export type ResponsesRequest = z.output<typeof responsesRequestSchema>;

type JsonRecord = Record<string, unknown>;
const asRecord = (value: unknown): JsonRecord | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonRecord) : undefined;

/**
 * The request's function and custom tools as ctxkit tool definitions (Responses tools are flat:
 * `{ type: "function", name, parameters }`), so their tokens count against the window. Built-in tools are
 * forwarded but not counted.
 *
 * @example
 * responsesToolDefinitions([{ type: "function", name: "ls", parameters: { type: "object" } }]);
 */
export function responsesToolDefinitions(tools: readonly unknown[] | null | undefined): ToolDefinition[] {
  const definitions: ToolDefinition[] = [];
  for (const tool of tools ?? []) {
    const entry = asRecord(tool);
    if (entry === undefined || typeof entry["name"] !== "string") continue;
    const schema = entry["parameters"] ?? entry["format"];
    definitions.push({
      name: entry["name"],
      ...(typeof entry["description"] === "string" && { description: entry["description"] }),
      ...(schema !== undefined && { inputSchema: schema as JsonValue }),
    });
  }
  return definitions;
}

/**
 * The body sent upstream: the client's fields with the governed `instructions` and `input`, never stored by
 * the upstream (`store: false`, ctxkit keeps the state), no `previous_response_id`, the server's model when it
 * has one, and — when the client sets `reasoning` — reasoning's encrypted content asked for so it can be sent back
 * on the next turn.
 *
 * @example
 * const body = responsesUpstreamBody(request, { input }, "gpt-5-mini");
 */
export function responsesUpstreamBody(
  request: ResponsesRequest,
  governed: { readonly instructions?: string; readonly input: readonly unknown[] },
  model: string | undefined,
): JsonRecord {
  const { previous_response_id: _previous, instructions: _instructions, ...rest } = request;
  const include = Array.isArray(request["include"]) ? (request["include"] as unknown[]) : [];
  // Asked for only when the client configures reasoning: models without it refuse the option.
  const wantsReasoning = request["reasoning"] != null && !include.includes("reasoning.encrypted_content");
  return {
    ...rest,
    ...(governed.instructions !== undefined && { instructions: governed.instructions }),
    input: governed.input,
    store: false,
    ...(wantsReasoning && { include: [...include, "reasoning.encrypted_content"] }),
    ...(model !== undefined && { model }),
  };
}

const PREFIX = "resp_ck.";

/**
 * Metadata key under which a stored reply keeps the id of the response it answered, so a `previous_response_id`
 * is recognised as the session's latest response by the reply itself: stored with it, never renumbered by a
 * compaction or a reload, and unique (an id is never issued twice).
 */
export const RESPONSE_ID_KEY = "openai.responseId";

/**
 * A new id for a stored response: `resp_ck.<session id, percent-encoded, dots too>.r<32 hex digits>`. It names
 * its session, so any server on the same store (a restarted one too) finds it; the random part makes it unique.
 *
 * @example
 * responseId("chat-1"); // "resp_ck.chat-1.r3f2a…"
 */
export function responseId(sessionId: string): string {
  return `${PREFIX}${encodeURIComponent(sessionId).replace(/\./g, "%2E")}.r${randomUUID().replaceAll("-", "")}`;
}

/** What a `previous_response_id` names. */
export interface ParsedResponseId {
  readonly sessionId: string;
  /**
   * For an id of the earlier form `resp_ck.<session>.<n>` (n counted the session's replies): that number, so a
   * client mid-chain across an upgrade can continue from it while it is still the latest.
   */
  readonly legacySequence?: number;
}

/**
 * The session a `previous_response_id` names (and, for an id of the earlier numbered form, its number); a 404
 * `previous_response_not_found` in OpenAI's shape for an id this server did not issue.
 *
 * @example
 * parseResponseId("resp_ck.chat-1.4"); // { sessionId: "chat-1", legacySequence: 4 }
 */
export function parseResponseId(id: string): ParsedResponseId {
  const match = /^resp_ck\.([^.]+)\.(?:(\d+)|r[0-9a-f]{32})$/.exec(id);
  let sessionId: string | undefined;
  try {
    sessionId = match === null ? undefined : decodeURIComponent(match[1]!);
  } catch {
    sessionId = undefined;
  }
  if (match === null || sessionId === undefined) throw previousResponseNotFound(id);
  return match[2] === undefined ? { sessionId } : { sessionId, legacySequence: Number(match[2]) };
}

/**
 * 404 for a `previous_response_id` that names no stored response of this tenant.
 *
 * @example
 * throw previousResponseNotFound("resp_abc");
 */
export function previousResponseNotFound(id: string): HttpError {
  return new HttpError(
    404,
    "previous_response_not_found",
    `Previous response with id '${id}' not found: ctxkit stores the responses it answered with store not false; ` +
      "send the whole conversation as input instead",
  );
}
