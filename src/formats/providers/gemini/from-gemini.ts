import type { ContentBlock, Message, ToolResultBlock } from "../../../model/message.ts";
import { buildMessages, userDraft, type MessageDraft } from "../message-builder.ts";
import type { ImportOptions } from "../options.ts";
import { partOptionsCarrier } from "../part-options-carrier.ts";
import { validatePayload } from "../validate-payload.ts";
import { fromGeminiMedia } from "./gemini-media.ts";
import { geminiPayloadSchema, type ParsedGeminiPayload } from "./gemini-schema.ts";
import { toolResultOf } from "./function-response.ts";
import { generatedCallId } from "./generated-call-id.ts";

type ParsedContent = ParsedGeminiPayload["contents"][number];
type ModelPart = Extract<ParsedContent, { role: "model" }>["parts"][number];
type UserPart = Extract<ParsedContent, { role: "user" | "function" }>["parts"][number];

/** Calls waiting for their response, so a response without an id finds its call by name, oldest first. */
type PendingCalls = { id: string; name: string }[];

function modelBlocks(
  part: ModelPart,
  contentIndex: number,
  partIndex: number,
  pending: PendingCalls,
): ContentBlock[] {
  if ("text" in part && part.thought === true)
    return [
      {
        type: "reasoning",
        text: part.text,
        ...(part.thoughtSignature !== undefined && {
          signature: part.thoughtSignature,
          signedBy: "google" as const,
        }),
      },
    ];
  // A signature on any other part is reasoning state that belongs to it: it travels as a carrier right before it.
  const carrier =
    part.thoughtSignature === undefined
      ? []
      : [partOptionsCarrier({ google: { thoughtSignature: part.thoughtSignature } })];
  if ("text" in part) return [...carrier, { type: "text", text: part.text }];
  if ("functionCall" in part) {
    const { name, args, id } = part.functionCall;
    const callId = id ?? generatedCallId(contentIndex, partIndex);
    pending.push({ id: callId, name });
    return [...carrier, { type: "tool-call", id: callId, name, input: args ?? {} }];
  }
  return [...carrier, fromGeminiMedia(part)];
}

function claimCall(pending: PendingCalls, id: string | undefined, name: string): string | undefined {
  const at = pending.findIndex((call) => (id === undefined ? call.name === name : call.id === id));
  if (at < 0) return id;
  return pending.splice(at, 1)[0]!.id;
}

function userDrafts(
  content: Extract<ParsedContent, { role: "user" | "function" }>,
  contentIndex: number,
  pending: PendingCalls,
): MessageDraft[] {
  const drafts: MessageDraft[] = [];
  const rest: ContentBlock[] = [];
  content.parts.forEach((part: UserPart, partIndex) => {
    if (!("functionResponse" in part)) {
      rest.push("text" in part ? { type: "text", text: part.text } : fromGeminiMedia(part));
      return;
    }
    const { name, response, id, parts } = part.functionResponse;
    const attachments = (parts ?? []).map(fromGeminiMedia);
    const block: ToolResultBlock = {
      type: "tool-result",
      callId: claimCall(pending, id, name) ?? generatedCallId(contentIndex, partIndex),
      toolName: name,
      ...toolResultOf(response),
      ...(attachments.length > 0 && { attachments }),
    };
    drafts.push({ role: "tool", content: [block] });
  });
  if (rest.length > 0) drafts.push(userDraft(rest));
  return drafts;
}

/**
 * Converts a Gemini payload (`{ systemInstruction, contents }`, or a whole request body) to ctxkit messages.
 * `model` turns become assistant messages (`thought` parts → reasoning with the signature; a signature on any
 * other part → a carrier block before it); a `user` turn is split into one tool message per `functionResponse`
 * plus a user message for its other parts. Calls without ids get stable generated ones, and responses without
 * ids are matched to the oldest unanswered call of the same name.
 *
 * @example
 * const messages = fromGemini({ contents: [{ role: "user", parts: [{ text: "Hi" }] }] });
 */
export function fromGemini(payload: unknown, options: ImportOptions = {}): Message[] {
  const parsed = validatePayload(geminiPayloadSchema, payload, "payload", "Gemini contents");
  const drafts: MessageDraft[] = [];
  if (parsed.systemInstruction !== undefined)
    drafts.push({
      role: "system",
      content: parsed.systemInstruction.parts.map((part) => ({ type: "text", text: part.text })),
    });
  const pending: PendingCalls = [];
  parsed.contents.forEach((content, contentIndex) => {
    if (content.role === "model") {
      const blocks = content.parts.flatMap((part, partIndex) =>
        modelBlocks(part, contentIndex, partIndex, pending),
      );
      drafts.push({ role: "assistant", content: blocks });
    } else drafts.push(...userDrafts(content, contentIndex, pending));
  });
  return buildMessages(drafts, options);
}
