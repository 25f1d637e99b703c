import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Middleware,
  LanguageModelV4Prompt,
} from "@ai-sdk/provider";
import {
  withPromptCaching,
  type PromptCachingOptions,
} from "../../formats/providers/ai-sdk/prompt-caching.ts";
import { ephemeralTail } from "../../formats/providers/anthropic/ephemeral-tail.ts";
import { Governor, type GovernedRequest, type GovernorOptions } from "../../governance/governor.ts";
import type { Message } from "../../model/message.ts";
import { isContextOverflowError } from "../../errors/overflow-recognition.ts";
import { bridgePrompt, unbridgePrompt, type BridgedPrompt } from "./prompt-bridge.ts";

/** Options of `ctxkitMiddleware`: the governor's, plus a session id, prompt caching and a hook per request. */
export interface CtxkitMiddlewareOptions extends GovernorOptions, PromptCachingOptions {
  /**
   * Stamped on the bridged messages (events and memory entries carry it); when given, it is also OpenAI's
   * prompt-cache key (`promptCacheKey`). Default "ai-sdk".
   */
  sessionId?: string;
  /** Called with every governed request (e.g. to log its events or inspect it). */
  onRequest?: (request: GovernedRequest) => void;
}

/**
 * An AI SDK language-model middleware that applies ctxkit governance to every model call of a
 * `generateText`/`streamText` agent loop: the prompt is governed before it is sent (truncation, offloading,
 * compaction, pre-flight), messages governance did not touch go out exactly as they came in, and a provider
 * overflow error triggers ctxkit's emergency recovery and one retry. For an Anthropic model the last tool, the
 * system prompt and the two newest stable messages carry cache breakpoints (`providerOptions.anthropic.cacheControl`,
 * on copies, never more than four with the caller's); for an OpenAI model given a `sessionId`, the call's
 * `providerOptions.openai.promptCacheKey` is that id unless the call set one (see `PromptCachingOptions`).
 *
 * @example
 * ```ts
 * import { wrapLanguageModel, generateText, stepCountIs } from "ai";
 * const governed = ctxkitMiddleware({ contextWindow: 128_000, counter, summarizer });
 * const model = wrapLanguageModel({ model: openai("gpt-4.1"), middleware: governed });
 * await generateText({ model, tools, prompt: "Fix the failing test", stopWhen: stepCountIs(50) });
 * ```
 */
export function ctxkitMiddleware(
  options: CtxkitMiddlewareOptions,
): LanguageModelV4Middleware & { governor: Governor } {
  const governor = new Governor(options);
  const sessionId = options.sessionId ?? "ai-sdk";
  const originals = new WeakMap<LanguageModelV4CallOptions, BridgedPrompt>();
  /** Every message bridged so far: the governor's view keeps the ones it did not rewrite. */
  const bridged = new WeakSet<Message>();

  /** The governed call with the model's prompt-cache hints (Anthropic breakpoints or OpenAI's cache key). */
  function withCaching(
    params: LanguageModelV4CallOptions,
    prompt: LanguageModelV4Prompt,
    model: LanguageModelV4,
    tail: number,
  ): LanguageModelV4CallOptions {
    const leading = prompt.findIndex((message) => message.role !== "system");
    const split = leading < 0 ? prompt.length : leading;
    const cached = withPromptCaching(
      {
        system: prompt.slice(0, split),
        messages: prompt.slice(split),
        tools: params.tools,
        providerOptions: params.providerOptions,
      },
      {
        ...options,
        model,
        sessionId: options.sessionId,
        ephemeralTail: tail,
        countTokens: (text) => options.counter.countText(text),
      },
    );
    return {
      ...params,
      prompt: [...cached.system, ...cached.messages],
      ...(cached.tools !== undefined && { tools: cached.tools }),
      ...(cached.providerOptions !== undefined && { providerOptions: cached.providerOptions }),
    };
  }

  async function govern(
    params: LanguageModelV4CallOptions,
    bridge: BridgedPrompt,
    model: LanguageModelV4,
  ): Promise<LanguageModelV4CallOptions> {
    const fixedTokens = params.tools ? options.counter.countText(JSON.stringify(params.tools)) : 0;
    const request = await governor.prepare(bridge.messages, {
      fixedTokens,
      ...(params.abortSignal !== undefined && { signal: params.abortSignal }),
    });
    options.onRequest?.(request);
    for (const message of bridge.messages) bridged.add(message);
    const prompt = unbridgePrompt(request.messages, bridge, (message) => bridged.has(message));
    const governed = withCaching(params, prompt, model, ephemeralTail(request.messages));
    originals.set(governed, bridge);
    return governed;
  }

  async function withRecovery<T>(
    params: LanguageModelV4CallOptions,
    model: LanguageModelV4,
    run: () => PromiseLike<T>,
    retry: (params: LanguageModelV4CallOptions) => PromiseLike<T>,
  ): Promise<T> {
    try {
      const result = await run();
      governor.recordSuccess();
      return result;
    } catch (error) {
      const bridge = originals.get(params);
      if (!bridge || !isContextOverflowError(error)) throw error;
      const outcome = await governor.recover(error, params.abortSignal);
      if (!outcome.retry) throw error;
      const result = await retry(await govern(params, bridge, model));
      governor.recordSuccess();
      return result;
    }
  }

  return {
    specificationVersion: "v4",
    governor,
    transformParams: ({ params, model }) => govern(params, bridgePrompt(params.prompt, sessionId), model),
    wrapGenerate: ({ doGenerate, params, model }) =>
      withRecovery(params, model, doGenerate, (retried) => model.doGenerate(retried)),
    wrapStream: ({ doStream, params, model }) =>
      withRecovery(params, model, doStream, (retried) => model.doStream(retried)),
  };
}
