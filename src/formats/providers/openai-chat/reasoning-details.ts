import type { JsonValue, ReasoningBlock } from "../../../model/message.ts";
import type { OpenAIChatReasoningDetail } from "./openai-chat-message.ts";

type Detail = OpenAIChatReasoningDetail;
const OWN_KEYS = new Set(["type", "text", "summary", "data", "signature"]);

function extraFields(detail: Readonly<Record<string, unknown>>): Record<string, JsonValue> {
  const extra: Record<string, JsonValue> = {};
  for (const [key, value] of Object.entries(detail))
    if (!OWN_KEYS.has(key) && value !== undefined && value !== null) extra[key] = value as JsonValue;
  return extra;
}

function openRouterData(block: ReasoningBlock): Record<string, JsonValue> | undefined {
  const data = block.providerData;
  if (typeof data !== "object" || data === null || Array.isArray(data)) return undefined;
  const entry = data["openrouter"];
  return typeof entry === "object" && entry !== null && !Array.isArray(entry) ? entry : undefined;
}

function detailOf(block: ReasoningBlock): Detail {
  const { type, ...extra } = openRouterData(block) ?? {};
  if (block.redacted === true) return { ...extra, type: "reasoning.encrypted", data: block.signature ?? "" };
  if (type === "reasoning.summary") return { ...extra, type: "reasoning.summary", summary: block.text };
  return {
    ...extra,
    type: "reasoning.text",
    text: block.text,
    ...(block.signature !== undefined && { signature: block.signature }),
  };
}

/**
 * The reasoning fields of an assistant message: `reasoning_content` (the joined text, read by most
 * OpenAI-compatible servers) and, when plain text would lose something (a signature, redacted reasoning, several
 * blocks), `reasoning_details` in the OpenRouter shape.
 */
export function reasoningFields(blocks: readonly ReasoningBlock[]): {
  reasoning_content?: string;
  reasoning_details?: Detail[];
} {
  if (blocks.length === 0) return {};
  const text = blocks
    .map((block) => block.text)
    .filter((part) => part !== "")
    .join("\n\n");
  const needsDetails =
    blocks.length > 1 ||
    blocks.some(
      (block) =>
        block.signature !== undefined ||
        block.redacted === true ||
        block.text === "" ||
        openRouterData(block) !== undefined,
    );
  return {
    ...(text !== "" && { reasoning_content: text }),
    ...(needsDetails && { reasoning_details: blocks.map(detailOf) }),
  };
}

/** Reasoning blocks from `reasoning_details` when present, else from `reasoning_content` (or `reasoning`). */
export function reasoningBlocksOf(message: {
  reasoning_content?: string | null | undefined;
  reasoning?: string | null | undefined;
  reasoning_details?:
    readonly Readonly<Record<string, unknown> & { type: Detail["type"] }>[] | null | undefined;
}): ReasoningBlock[] {
  const details = message.reasoning_details ?? [];
  if (details.length === 0) {
    const text = message.reasoning_content ?? message.reasoning ?? "";
    return text === "" ? [] : [{ type: "reasoning", text }];
  }
  return details.map((detail) => {
    const extra = extraFields(detail);
    const text = (detail.type === "reasoning.summary" ? detail["summary"] : detail["text"]) ?? "";
    const signature = detail.type === "reasoning.encrypted" ? detail["data"] : detail["signature"];
    if (detail.type === "reasoning.summary") extra["type"] = "reasoning.summary";
    return {
      type: "reasoning",
      text: typeof text === "string" ? text : "",
      ...(typeof signature === "string" && { signature }),
      ...(detail.type === "reasoning.encrypted" && { redacted: true }),
      ...(Object.keys(extra).length > 0 && { providerData: { openrouter: extra } }),
    };
  });
}
