import type { LanguageModelV4 } from "@ai-sdk/provider";
import { streamText, type LanguageModelUsage, type TextStreamPart, type ToolSet } from "ai";
import type { AssistantInput } from "../../conversation/conversation.ts";
import type { PreparedRequest } from "../../engine/prepared-request.ts";
import { InterruptedError } from "../../errors/errors.ts";
import type { ContentBlock, Usage } from "../../model/message.ts";
import { classifyProviderError, type ProviderErrorContext } from "../../providers/classify-provider-error.ts";
import { withRetries, type RetryNotice } from "../../providers/with-retries.ts";

/** Options of `streamReply`. */
export interface StreamReplyOptions {
  readonly model: LanguageModelV4;
  readonly request: PreparedRequest;
  /** The turn's signal (`session.beginRequest()`): aborting it ends the stream with `InterruptedError`. */
  readonly signal: AbortSignal;
  /** Retries of a call that failed before its first token (rate limits, network, 5xx). */
  readonly maxRetries: number;
  /** Time limit of one call, in ms. */
  readonly timeoutMs?: number | undefined;
  /** First backoff delay of the retries. Default 1,000 ms. */
  readonly baseDelayMs?: number;
  readonly onDelta: (text: string) => void;
  readonly onRetry?: (notice: RetryNotice) => void;
  /** The provider called, so failures name the right key variable and base URL. */
  readonly context?: ProviderErrorContext;
}

type Part = TextStreamPart<ToolSet>;
type Stream = AsyncIterator<Part>;

function toUsage(usage: LanguageModelUsage | undefined): Usage | undefined {
  if (usage?.inputTokens === undefined && usage?.outputTokens === undefined) return undefined;
  const cacheRead = usage.inputTokenDetails.cacheReadTokens;
  const cacheWrite = usage.inputTokenDetails.cacheWriteTokens;
  const reasoning = usage.outputTokenDetails.reasoningTokens;
  return {
    input: usage.inputTokens ?? 0,
    output: usage.outputTokens ?? 0,
    ...(cacheRead !== undefined && cacheRead > 0 && { cacheRead }),
    ...(cacheWrite !== undefined && cacheWrite > 0 && { cacheWrite }),
    ...(reasoning !== undefined && reasoning > 0 && { reasoning }),
  };
}

/** Starts the call and reads up to its first content: failures before any output can be retried safely. */
async function openStream(options: StreamReplyOptions, signal: AbortSignal): Promise<[Stream, Part[]]> {
  const { request } = options;
  const result = streamText({
    model: options.model,
    // With the provider's prompt-cache hints (Anthropic breakpoints, OpenAI's cache key).
    ...request.toAiSdk({ model: options.model }),
    abortSignal: signal,
    maxRetries: 0,
    // Errors arrive as stream parts and are thrown classified; the SDK's default would log them to stderr.
    onError: () => {},
  });
  const stream = result.stream[Symbol.asyncIterator]();
  const seen: Part[] = [];
  for (;;) {
    const next = await stream.next();
    if (next.done === true) return [stream, seen];
    const part = next.value;
    if (part.type === "error") throw part.error;
    seen.push(part);
    if (part.type === "text-delta" || part.type === "reasoning-delta" || part.type === "finish") {
      return [stream, seen];
    }
  }
}

/**
 * Streams one model reply for a prepared request through the AI SDK, handing each text delta to `onDelta`, and
 * returns what to record. A call failing before its first token is retried (bounded, with backoff); later
 * failures are not (the user has seen part of the reply). Failures are thrown as classified `ProviderError`s;
 * an aborted signal throws `InterruptedError`.
 *
 * @example
 * const signal = await session.beginRequest();
 * const request = await session.prepare({ system, signal });
 * await session.record(await streamReply({ model, request, signal, maxRetries: 2, onDelta: write }));
 */
export async function streamReply(options: StreamReplyOptions): Promise<AssistantInput> {
  const { signal } = options;
  const callSignal =
    options.timeoutMs === undefined
      ? signal
      : AbortSignal.any([signal, AbortSignal.timeout(options.timeoutMs)]);
  let text = "";
  let reasoning = "";
  let usage: Usage | undefined;
  let finishReason: string | undefined;
  const take = (part: Part): void => {
    if (part.type === "text-delta") {
      text += part.text;
      options.onDelta(part.text);
    } else if (part.type === "reasoning-delta") reasoning += part.text;
    else if (part.type === "finish") {
      usage = toUsage(part.totalUsage);
      finishReason = part.finishReason;
    } else if (part.type === "error") throw part.error;
  };
  try {
    const [stream, seen] = await withRetries(() => openStream(options, callSignal), {
      maxRetries: options.maxRetries,
      signal,
      ...(options.baseDelayMs !== undefined && { baseDelayMs: options.baseDelayMs }),
      ...(options.onRetry !== undefined && { onRetry: options.onRetry }),
      ...(options.context !== undefined && { context: options.context }),
    });
    for (const part of seen) take(part);
    for (let next = await stream.next(); next.done !== true; next = await stream.next()) take(next.value);
  } catch (error) {
    if (signal.aborted) throw new InterruptedError();
    throw classifyProviderError(error, options.context);
  }
  if (signal.aborted) throw new InterruptedError();
  if (callSignal.aborted) throw classifyProviderError(callSignal.reason, options.context);
  const content: ContentBlock[] = [
    ...(reasoning === "" ? [] : [{ type: "reasoning" as const, text: reasoning }]),
    { type: "text", text },
  ];
  return {
    content,
    model: options.model.modelId,
    provider: options.model.provider,
    ...(usage !== undefined && { usage }),
    ...(finishReason !== undefined && { finishReason }),
  };
}
