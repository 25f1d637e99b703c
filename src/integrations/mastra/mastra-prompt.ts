import type { JSONValue } from "@ai-sdk/provider";
import type { AssistantInput } from "../../conversation/conversation.ts";
import { fromAiSdk } from "../../formats/providers/ai-sdk/from-ai-sdk.ts";
import type { Usage } from "../../model/message.ts";
import {
  mergedMetadata,
  providerToolOutput,
  type ProviderMetadata,
} from "../shared/language-model-prompt.ts";

/** A step's chunk as Mastra hands it to `processLLMResponse`. */
export interface StepChunk {
  readonly type: string;
  readonly payload: unknown;
}

interface ChunkPayload {
  readonly id?: string;
  readonly text?: string;
  readonly toolCallId?: string;
  readonly toolName?: string;
  readonly args?: Record<string, unknown>;
  readonly providerExecuted?: boolean;
  readonly providerMetadata?: ProviderMetadata;
  readonly result?: JSONValue;
  readonly isError?: boolean;
  /** A file chunk's data (base64, a URL, bytes or tagged data) and media type. */
  readonly data?: unknown;
  readonly mimeType?: string;
  readonly stepResult?: { readonly reason?: string };
  readonly output?: {
    readonly usage?: {
      readonly inputTokens?: number;
      readonly outputTokens?: number;
      readonly cachedInputTokens?: number;
      readonly cacheCreationInputTokens?: number;
      readonly reasoningTokens?: number;
    };
  };
}

function usageOf(payload: ChunkPayload): Usage | undefined {
  const usage = payload.output?.usage;
  if (usage?.inputTokens === undefined) return undefined;
  return {
    input: usage.inputTokens,
    output: usage.outputTokens ?? 0,
    ...(usage.cachedInputTokens ? { cacheRead: usage.cachedInputTokens } : {}),
    ...(usage.cacheCreationInputTokens ? { cacheWrite: usage.cacheCreationInputTokens } : {}),
    ...(usage.reasoningTokens ? { reasoning: usage.reasoningTokens } : {}),
  };
}

interface TextPart {
  readonly type: "text" | "reasoning";
  text: string;
  providerOptions?: ProviderMetadata;
}

type ReplyPart = TextPart | { readonly type: string; readonly [key: string]: unknown };

function textPart(chunkType: string, metadata: ProviderMetadata | undefined): TextPart {
  return {
    type: chunkType.startsWith("reasoning") ? "reasoning" : "text",
    text: "",
    ...(metadata !== undefined && { providerOptions: metadata }),
  };
}

function optionsOf(payload: ChunkPayload): { providerOptions?: ProviderMetadata } {
  return payload.providerMetadata !== undefined ? { providerOptions: payload.providerMetadata } : {};
}

/**
 * The model's reply of one step, read from the step's chunks as the AI SDK's assistant prompt parts: text and
 * reasoning (with all their provider metadata — a signature comes on a delta, redacted data on the start), tool
 * calls (provider-executed ones too, with their results), generated files; usage and finish reason.
 */
export function replyOfChunks(chunks: readonly StepChunk[], model: string | undefined): AssistantInput {
  const parts: ReplyPart[] = [];
  const open = new Map<string, TextPart>();
  // Calls the provider ran: their results come in the model's stream, the agent's own tools' results do not.
  const executed = new Set<string>();
  let usage: Usage | undefined;
  let finishReason: string | undefined;
  for (const chunk of chunks) {
    const payload = (chunk.payload ?? {}) as ChunkPayload;
    const key = `${chunk.type.split("-")[0]}:${payload.id ?? ""}`;
    switch (chunk.type) {
      case "text-start":
      case "reasoning-start": {
        const part = textPart(chunk.type, payload.providerMetadata);
        parts.push(part);
        open.set(key, part);
        break;
      }
      case "text-delta":
      case "reasoning-delta":
      case "text-end":
      case "reasoning-end": {
        let part = open.get(key);
        if (part === undefined) {
          if (chunk.type.endsWith("-end")) break;
          part = textPart(chunk.type, undefined);
          parts.push(part);
          open.set(key, part);
        }
        if (chunk.type.endsWith("-delta")) part.text += payload.text ?? "";
        const metadata = mergedMetadata(part.providerOptions, payload.providerMetadata);
        if (metadata !== undefined) part.providerOptions = metadata;
        if (chunk.type.endsWith("-end")) open.delete(key);
        break;
      }
      case "tool-call": {
        const { __mastraMetadata: _metadata, ...input } = payload.args ?? {};
        const providerExecuted = payload.providerExecuted === true;
        if (providerExecuted && payload.toolCallId !== undefined) executed.add(payload.toolCallId);
        parts.push({
          type: "tool-call",
          toolCallId: payload.toolCallId,
          toolName: payload.toolName,
          input,
          ...(providerExecuted && { providerExecuted: true }),
          // A Gemini thought signature, an OpenAI item id: the AI SDK sends them back on the call.
          ...optionsOf(payload),
        });
        break;
      }
      case "tool-result":
        if (payload.toolCallId === undefined) break;
        if (payload.providerExecuted !== true && !executed.has(payload.toolCallId)) break;
        parts.push({
          type: "tool-result",
          toolCallId: payload.toolCallId,
          toolName: payload.toolName,
          output: providerToolOutput(payload.result ?? null, payload.isError),
          ...optionsOf(payload),
        });
        break;
      case "file":
        if (payload.data === undefined || payload.mimeType === undefined) break;
        parts.push({ type: "file", data: payload.data, mediaType: payload.mimeType, ...optionsOf(payload) });
        break;
      case "finish":
        usage = usageOf(payload);
        finishReason = payload.stepResult?.reason;
        break;
    }
  }
  const content = parts.filter((part) => part.type !== "text" || part.text !== "");
  const [converted] = fromAiSdk([{ role: "assistant", content }]);
  return {
    content: converted?.content ?? [],
    ...(usage !== undefined && { usage }),
    ...(finishReason !== undefined && { finishReason }),
    ...(model !== undefined && { model }),
  };
}
