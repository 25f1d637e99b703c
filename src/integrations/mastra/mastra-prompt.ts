import type { AssistantInput } from "../../conversation/conversation.ts";
import { fromAiSdk } from "../../formats/providers/ai-sdk/from-ai-sdk.ts";
import type { Usage } from "../../model/message.ts";

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
  readonly providerMetadata?: Record<string, Record<string, unknown>>;
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
  providerOptions?: unknown;
}

type ReplyPart = TextPart | { readonly type: "tool-call"; readonly [key: string]: unknown };

function textPart(chunkType: string): TextPart {
  return { type: chunkType.startsWith("reasoning") ? "reasoning" : "text", text: "" };
}

/**
 * The model's reply of one step, read from the step's chunks: text and reasoning (with their provider metadata,
 * e.g. a signature), tool calls the agent runs, usage and finish reason.
 */
export function replyOfChunks(chunks: readonly StepChunk[], model: string | undefined): AssistantInput {
  const parts: ReplyPart[] = [];
  const open = new Map<string, TextPart>();
  let usage: Usage | undefined;
  let finishReason: string | undefined;
  for (const chunk of chunks) {
    const payload = (chunk.payload ?? {}) as ChunkPayload;
    const key = `${chunk.type.split("-")[0]}:${payload.id ?? ""}`;
    switch (chunk.type) {
      case "text-start":
      case "reasoning-start": {
        const part = textPart(chunk.type);
        parts.push(part);
        open.set(key, part);
        break;
      }
      case "text-delta":
      case "reasoning-delta": {
        let part = open.get(key);
        if (part === undefined) {
          part = textPart(chunk.type);
          parts.push(part);
          open.set(key, part);
        }
        part.text += payload.text ?? "";
        if (payload.providerMetadata !== undefined) part.providerOptions = payload.providerMetadata;
        break;
      }
      case "text-end":
      case "reasoning-end": {
        const part = open.get(key);
        if (part !== undefined && payload.providerMetadata !== undefined)
          part.providerOptions = payload.providerMetadata;
        open.delete(key);
        break;
      }
      case "tool-call": {
        if (payload.providerExecuted === true) break;
        const { __mastraMetadata: _metadata, ...input } = payload.args ?? {};
        parts.push({ type: "tool-call", toolCallId: payload.toolCallId, toolName: payload.toolName, input });
        break;
      }
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
