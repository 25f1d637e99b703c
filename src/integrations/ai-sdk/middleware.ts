import type { LanguageModelV4CallOptions, LanguageModelV4Middleware } from "@ai-sdk/provider";
import { Governor, type GovernedRequest, type GovernorOptions } from "../../governance/governor.ts";
import { isContextOverflowError } from "../../governance/overflow-recognition.ts";
import { bridgePrompt, unbridgePrompt, type BridgedPrompt } from "./prompt-bridge.ts";

/** Options of `ctxkitMiddleware`: the governor's, plus a session id and a hook per governed request. */
export interface CtxkitMiddlewareOptions extends GovernorOptions {
  /** Stamped on the bridged messages (events and memory entries carry it). Default "ai-sdk". */
  sessionId?: string;
  /** Called with every governed request (e.g. to log its events or inspect it). */
  onRequest?: (request: GovernedRequest) => void;
}

/**
 * An AI SDK language-model middleware that applies ctxkit governance to every model call of a
 * `generateText`/`streamText` agent loop: the prompt is governed before it is sent (truncation, offloading,
 * compaction, pre-flight), messages governance did not touch go out exactly as they came in, and a provider
 * overflow error triggers ctxkit's emergency recovery and one retry.
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

  async function govern(
    params: LanguageModelV4CallOptions,
    bridge: BridgedPrompt,
  ): Promise<LanguageModelV4CallOptions> {
    const fixedTokens = params.tools ? options.counter.countText(JSON.stringify(params.tools)) : 0;
    const request = await governor.prepare(bridge.messages, {
      fixedTokens,
      ...(params.abortSignal !== undefined && { signal: params.abortSignal }),
    });
    options.onRequest?.(request);
    const governed = { ...params, prompt: unbridgePrompt(request.messages, bridge) };
    originals.set(governed, bridge);
    return governed;
  }

  async function withRecovery<T>(
    params: LanguageModelV4CallOptions,
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
      const result = await retry(await govern(params, bridge));
      governor.recordSuccess();
      return result;
    }
  }

  return {
    specificationVersion: "v4",
    governor,
    transformParams: ({ params }) => govern(params, bridgePrompt(params.prompt, sessionId)),
    wrapGenerate: ({ doGenerate, params, model }) =>
      withRecovery(params, doGenerate, (retried) => model.doGenerate(retried)),
    wrapStream: ({ doStream, params, model }) =>
      withRecovery(params, doStream, (retried) => model.doStream(retried)),
  };
}
