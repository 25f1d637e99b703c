/**
 * AI SDK language-model prompts (the `LanguageModelV4Prompt` a middleware, Mastra processor or provider sees) read
 * as what an engine session records, and governed messages written back as one.
 */
import type {
  JSONValue,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  SharedV4ProviderMetadata,
} from "@ai-sdk/provider";
import type { ModelMessage } from "ai";
import { fromAiSdk } from "../../formats/providers/ai-sdk/from-ai-sdk.ts";
import { toAiSdk } from "../../formats/providers/ai-sdk/to-ai-sdk.ts";
import type { Message } from "../../model/message.ts";
import { canonicalJson } from "../../model/blocks.ts";
import type { FeedEntry, FeedItem } from "./session-feed.ts";

/**
 * A prompt message (not a system one) as what a session records: a user message, an assistant reply, or one
 * entry per tool result. Read with `fromAiSdk`, so reasoning signatures and part provider options are kept.
 */
export function entriesOf(message: LanguageModelV4Message | ModelMessage): FeedEntry[] {
  return feedItemsOf(message).map((item) => item.entry);
}

/**
 * A prompt message as the items a session feed records (see `entriesOf`), keyed by the message's JSON. A user or
 * assistant item keeps the message-level `providerOptions` (a caller's cache breakpoint) in its metadata, so the
 * governed prompt carries them again.
 */
export function feedItemsOf<Source extends LanguageModelV4Message | ModelMessage>(
  message: Source,
): FeedItem<Source>[] {
  const key = canonicalJson(message);
  return fromAiSdk([message]).flatMap((converted): FeedItem<Source>[] => {
    const metadata = converted.metadata === undefined ? {} : { metadata: converted.metadata };
    const item = (entry: FeedEntry): FeedItem<Source> => ({ entry, source: message, key, ...metadata });
    if (converted.role === "user") return [item({ role: "user", content: converted.content })];
    if (converted.role === "assistant")
      return [item({ role: "assistant", reply: { content: converted.content } })];
    if (converted.role !== "tool") return [];
    return converted.content.flatMap((block) =>
      block.type === "tool-result" ? [item({ role: "tool" as const, result: block })] : [],
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

/** Provider metadata or options: `{ [provider]: { [key]: value } }`. */
export type ProviderMetadata = SharedV4ProviderMetadata;

/**
 * `base` with `update`'s entries, provider by provider: a later key wins, earlier keys stay. A streamed text or
 * reasoning part's metadata may come on its start (Anthropic's redacted thinking), a delta (its thinking
 * signature) or its end; merged, none is lost.
 *
 * @example
 * mergedMetadata({ anthropic: { redactedData: "R" } }, { anthropic: { signature: "S" } });
 * // { anthropic: { redactedData: "R", signature: "S" } }
 */
export function mergedMetadata(
  base: ProviderMetadata | undefined,
  update: ProviderMetadata | undefined,
): ProviderMetadata | undefined {
  if (update === undefined) return base;
  const merged: ProviderMetadata = { ...base };
  for (const [provider, entries] of Object.entries(update))
    merged[provider] = { ...merged[provider], ...entries };
  return merged;
}

/**
 * The `output` of a provider-executed tool's result (`result`, as a model reports it) in the prompt part the AI
 * SDK makes of it: `error-json` for an error, `text` for a string, else `json`.
 *
 * @example
 * providerToolOutput([{ type: "web_search_result", url: "https://a.test" }], false); // { type: "json", value: [...] }
 */
export function providerToolOutput(
  result: JSONValue,
  isError: boolean | undefined,
):
  | { type: "error-json"; value: JSONValue }
  | { type: "text"; value: string }
  | { type: "json"; value: JSONValue } {
  if (isError === true) return { type: "error-json", value: result };
  return typeof result === "string" ? { type: "text", value: result } : { type: "json", value: result };
}
