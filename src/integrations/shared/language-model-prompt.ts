/**
 * AI SDK language-model prompts (the `LanguageModelV4Prompt` a middleware, Mastra processor or provider sees) read
 * as what an engine session records, and governed messages written back as one.
 */
import type { LanguageModelV4Message, LanguageModelV4Prompt } from "@ai-sdk/provider";
import type { ModelMessage } from "ai";
import { fromAiSdk } from "../../formats/providers/ai-sdk/from-ai-sdk.ts";
import { toAiSdk } from "../../formats/providers/ai-sdk/to-ai-sdk.ts";
import type { Message } from "../../model/message.ts";
import type { FeedEntry } from "./session-feed.ts";

/**
 * A prompt message (not a system one) as what a session records: a user message, an assistant reply, or one
 * entry per tool result. Read with `fromAiSdk`, so reasoning signatures and part provider options are kept.
 */
export function entriesOf(message: LanguageModelV4Message | ModelMessage): FeedEntry[] {
  return fromAiSdk([message]).flatMap((converted): FeedEntry[] => {
    if (converted.role === "user") return [{ role: "user", content: converted.content }];
    if (converted.role === "assistant") return [{ role: "assistant", reply: { content: converted.content } }];
    if (converted.role !== "tool") return [];
    return converted.content.flatMap((block) =>
      block.type === "tool-result" ? [{ role: "tool" as const, result: block }] : [],
    );
  });
}

/**
 * Governed messages as a language-model prompt, written by `toAiSdk` (so a message reads the same every step and
 * after a restart): string contents become text parts; for models of an older specification (`v2`, `v3`), file
 * data is untagged.
 */
export function toPrompt(messages: readonly Message[], specification: string): LanguageModelV4Prompt {
  const converted = toAiSdk(messages, { references: "placeholder" }).messages;
  return converted.map((message) => {
    const content =
      typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
    const parts = specification === "v4" ? content : content.map(untagged);
    return { ...message, content: parts } as LanguageModelV4Message;
  });
}

function untagged<Part>(part: Part): Part {
  const data = (part as { data?: unknown }).data;
  if (typeof data !== "object" || data === null || !("type" in data)) return part;
  const tagged = data as { type: string; data?: unknown; url?: unknown };
  if (tagged.type === "data") return { ...part, data: tagged.data };
  if (tagged.type === "url") return { ...part, data: tagged.url };
  return part;
}
