import type { AssistantContent, ModelMessage, SystemModelMessage, ToolResultPart, UserContent } from "ai";
import type { ContentBlock, FileBlock, ImageBlock, Message } from "../../../model/message.ts";
import { cameAsList } from "../content-list.ts";
import { planExport, where } from "../export-plan.ts";
import type { ExportOptions } from "../options.ts";
import { withPartOptions, type PartOptions } from "../part-options-carrier.ts";
import { toAiSdkMediaPart } from "./ai-sdk-media.ts";
import type { ProviderOptions } from "./ai-sdk-types.ts";
import { AI_SDK_CONTENT_LIST_KEY, assistantString } from "./content-form.ts";
import {
  mergeProviderOptions,
  RESULT_OPTIONS_KEY,
  recordedOptions,
  withRecordedOptions,
} from "./part-options.ts";
import { reasoningProviderOptions, type SignatureProvider } from "./reasoning-options.ts";
import { AI_SDK_OPAQUE_PROVIDER, partOfOpaqueBlock } from "./opaque-parts.ts";
import { toToolOutput } from "./tool-output.ts";

/** Metadata key under which a message keeps the message-level `providerOptions` of an imported ModelMessage. */
export const MESSAGE_PROVIDER_OPTIONS_KEY = "aiSdk.providerOptions";

/** Options of `toAiSdk` and `fromAiSdk`. */
export interface AiSdkOptions {
  /**
   * Provider whose AI SDK package should find a bare reasoning signature (`anthropic` → `providerOptions.anthropic.signature`,
   * `google` → `providerOptions.google.thoughtSignature`). Default `anthropic`. Pass the same value to `fromAiSdk`.
   */
  readonly signatureProvider?: SignatureProvider;
}

function userContent(
  blocks: readonly ContentBlock[],
  message: Message,
  index: number,
  options: ExportOptions,
): UserContent {
  const only = blocks[0];
  if (blocks.length === 1 && only?.type === "text" && !cameAsList(message, AI_SDK_CONTENT_LIST_KEY))
    return only.text;
  const parts = blocks.flatMap((block, position) =>
    // The AI SDK's opaque parts are the model's: a user message has no place for them.
    block.type === "opaque"
      ? []
      : block.type === "text"
        ? [{ type: "text" as const, text: block.text }]
        : [
            toAiSdkMediaPart(
              block as ImageBlock | FileBlock,
              `${where(index)}.content[${position}]`,
              options.references === "placeholder",
            ),
          ],
  );
  // A summary's blocks are its envelope, not the message's own parts: nothing recorded applies to them.
  return message.kind === "summary" ? parts : withRecordedOptions(parts, message);
}

function withOptions<Part extends object>(part: Part, options: PartOptions | undefined): Part {
  // Carried options add to the part's own (an image's detail level) rather than replace them.
  const own = "providerOptions" in part ? (part.providerOptions as ProviderOptions | undefined) : undefined;
  const providerOptions = mergeProviderOptions(own, options);
  return providerOptions === undefined ? part : { ...part, providerOptions };
}

function assistantContent(
  message: Message,
  index: number,
  options: ExportOptions & AiSdkOptions,
): AssistantContent {
  // A string stays a string while the message still holds just its text.
  const string = assistantString(message);
  if (string !== undefined) return string;
  const provider = options.signatureProvider ?? "anthropic";
  return withPartOptions(message.content).map(({ block, options: carried }, position) => {
    const at = `${where(index)}.content[${position}]`;
    switch (block.type) {
      case "text":
        return withOptions({ type: "text", text: block.text }, carried);
      case "reasoning":
        return withOptions(
          { type: "reasoning", text: block.text },
          reasoningProviderOptions(block, provider),
        );
      case "tool-call":
        return withOptions(
          { type: "tool-call", toolCallId: block.id, toolName: block.name, input: block.input },
          carried,
        );
      case "image":
      case "file":
        return withOptions(toAiSdkMediaPart(block, at, options.references === "placeholder"), carried);
      case "tool-result":
        throw new Error("unreachable: planExport keeps tool results out of assistant messages");
      case "opaque":
        // planExport keeps only the AI SDK's own: a provider-executed call or result, a custom part, … as it came.
        return partOfOpaqueBlock(block);
    }
  });
}

function messageOptions(message: Message): { providerOptions?: ProviderOptions } {
  const stored = message.metadata?.[MESSAGE_PROVIDER_OPTIONS_KEY];
  return typeof stored === "object" && stored !== null && !Array.isArray(stored)
    ? { providerOptions: stored as ProviderOptions }
    : {};
}

/** What `generateText` / `streamText` take: system messages as `instructions` (AI SDK v7 refuses them in `messages`). */
export interface AiSdkPrompt {
  instructions?: SystemModelMessage[];
  messages: ModelMessage[];
}

/**
 * Converts ctxkit messages to an AI SDK v7 prompt: system messages become `instructions` (v7 rejects system
 * messages inside `messages`), the rest `ModelMessage[]`. User content of one text is a string and assistant
 * content a list of parts, unless the message was imported in the other form. Images and files become `file`
 * parts with tagged data, an image's detail level in `providerOptions.openai.imageDetail` (in tool outputs too);
 * reasoning becomes `reasoning` parts whose `providerOptions` carry the signature and provider material;
 * part-options carriers become the `providerOptions` of the part after them, and the part, result and output
 * `providerOptions` `fromAiSdk` kept in a message's metadata go back on their parts (while the parts are still
 * the ones they came with: see `withRecordedOptions`). The AI SDK's opaque blocks (provider `ai-sdk`: a
 * provider-executed tool call and its result, `custom` and `reasoning-file` parts) go back as the parts they
 * were, at their place; other providers' opaque blocks are left out. Consecutive tool messages become one `tool` message;
 * outputs are `text` / `json` / `error-text` / `error-json`, or `content` when there are attachments.
 * Summaries are user text in the summary envelope; markers are left out.
 *
 * @example
 * const result = await generateText({ model, ...toAiSdk(history) });
 */
export function toAiSdk(
  messages: readonly Message[],
  options: ExportOptions & AiSdkOptions = {},
): AiSdkPrompt {
  const placeholders = options.references === "placeholder";
  const instructions: SystemModelMessage[] = [];
  const output: ModelMessage[] = [];
  const plan = planExport(messages, { ...options, format: "AI SDK", opaqueProvider: AI_SDK_OPAQUE_PROVIDER });
  for (const entry of plan) {
    switch (entry.kind) {
      case "system": {
        const text = entry.message.content
          .flatMap((block) => (block.type === "text" ? [block.text] : []))
          .join("\n\n");
        instructions.push({ role: "system", content: text, ...messageOptions(entry.message) });
        break;
      }
      case "user":
        output.push({
          role: "user",
          content: userContent(entry.blocks, entry.message, entry.index, options),
          ...messageOptions(entry.message),
        });
        break;
      case "assistant":
        output.push({
          role: "assistant",
          content: assistantContent(entry.message, entry.index, options),
          ...messageOptions(entry.message),
        });
        break;
      case "tools":
        output.push({
          role: "tool",
          content: entry.results.map(({ block, message, index }): ToolResultPart => ({
            type: "tool-result",
            toolCallId: block.callId,
            toolName: block.toolName,
            output: toToolOutput(block, message, `${where(index)}.content[0]`, placeholders),
            ...recordedOptions(message, RESULT_OPTIONS_KEY),
          })),
          ...(entry.results[0] !== undefined && messageOptions(entry.results[0].message)),
        });
    }
  }
  return { ...(instructions.length > 0 && { instructions }), messages: output };
}
