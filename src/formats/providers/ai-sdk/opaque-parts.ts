/**
 * The assistant parts of an AI SDK `ModelMessage` that ctxkit does not model — a provider-executed tool call and
 * its result (Anthropic's web search, OpenAI's built-in tools), `custom` parts, `reasoning-file` parts — kept as
 * opaque blocks of the provider `ai-sdk`, so `toAiSdk` sends them back as they came, at their place.
 */
import type { AssistantContent } from "ai";
import type { JsonValue, OpaqueBlock } from "../../../model/message.ts";
import { fromAiSdkFileData } from "./ai-sdk-media.ts";
import type { ParsedAiSdkMessage } from "./ai-sdk-schema.ts";

/** The provider name of the opaque blocks holding AI SDK parts: only `toAiSdk` sends them. */
export const AI_SDK_OPAQUE_PROVIDER = "ai-sdk";

/** A part of an AI SDK assistant message. */
type AiSdkAssistantPart = Exclude<AssistantContent, string>[number];

type AssistantPart = Exclude<Extract<ParsedAiSdkMessage, { role: "assistant" }>["content"], string>[number];

/** `value` as plain JSON: no `undefined` fields (the AI SDK writes `providerOptions: undefined`). */
function plain(value: object): { [key: string]: JsonValue } {
  return JSON.parse(JSON.stringify(value)) as { [key: string]: JsonValue };
}

/**
 * An opaque assistant part as an opaque block. A reasoning file's bytes become base64 and its URL a string (the
 * block is JSON); everything else is kept as the part came, `undefined` fields aside.
 *
 * @example
 * opaqueBlockOf({ type: "tool-call", toolCallId: "ws1", toolName: "web_search", input: {}, providerExecuted: true });
 * // { type: "opaque", provider: "ai-sdk", data: { type: "tool-call", toolCallId: "ws1", … } }
 */
export function opaqueBlockOf(part: AssistantPart): OpaqueBlock {
  if (part.type !== "reasoning-file")
    return { type: "opaque", provider: AI_SDK_OPAQUE_PROVIDER, data: plain(part) };
  const source = fromAiSdkFileData(part.data);
  const data =
    source.data !== undefined ? { type: "data", data: source.data } : { type: "url", url: source.url };
  return { type: "opaque", provider: AI_SDK_OPAQUE_PROVIDER, data: plain({ ...part, data }) };
}

/**
 * The AI SDK part an opaque block of the provider `ai-sdk` holds, as a fresh copy (a reasoning file's URL is a
 * `URL` again).
 *
 * @example
 * toAiSdk(messages).messages[1].content[0]; // the provider-executed tool call, as it came
 */
export function partOfOpaqueBlock(block: OpaqueBlock): AiSdkAssistantPart {
  const part = structuredClone<{ [key: string]: JsonValue }>(block.data);
  const data = part["data"];
  const url =
    part["type"] === "reasoning-file" && typeof data === "object" && data !== null && !Array.isArray(data)
      ? data["url"]
      : undefined;
  const restored = typeof url === "string" ? { ...part, data: { type: "url", url: new URL(url) } } : part;
  return restored as unknown as AiSdkAssistantPart;
}
