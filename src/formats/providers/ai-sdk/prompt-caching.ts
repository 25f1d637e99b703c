import { createHash } from "node:crypto";
import type { LanguageModel } from "ai";
import type { CacheTtl } from "../anthropic/cache-breakpoints.ts";
import type { ProviderOptions } from "./ai-sdk-types.ts";
import {
  withAiSdkBreakpoints,
  type AiSdkBreakpointInput,
  type CacheableAiSdkMessage,
  type CacheableAiSdkTool,
} from "./ai-sdk-breakpoints.ts";

/** How ctxkit asks the provider to cache the prompt's prefix (every field optional). */
export interface PromptCachingOptions {
  /**
   * Anthropic `cache_control` breakpoints on the tools, the system prompt and the two newest stable messages,
   * for Anthropic models (`providerOptions.anthropic.cacheControl`). Default true.
   */
  readonly cacheBreakpoints?: boolean;
  /** TTL of those breakpoints: `5m` (default) or `1h` (written at 2× instead of 1.25× the input price). */
  readonly cacheTtl?: CacheTtl;
  /**
   * OpenAI's `prompt_cache_key` (`providerOptions.openai.promptCacheKey`), which routes requests with the same
   * key to the same cache, for OpenAI models. Default: the session id, when there is one; false sends none. Keys
   * longer than OpenAI's 64 characters are shortened with a hash (`promptCacheKeyFor`).
   */
  readonly promptCacheKey?: string | false;
}

/** OpenAI rejects a `prompt_cache_key` longer than this (`string_above_max_length`). */
export const MAX_PROMPT_CACHE_KEY_LENGTH = 64;

/**
 * An OpenAI `prompt_cache_key` for a session id: the id itself when it fits in 64 characters, otherwise its first
 * 47 characters, a colon and 16 hex digits of its SHA-256 (stable, and distinct for ids sharing a prefix).
 *
 * @example
 * promptCacheKeyFor("support-42"); // "support-42"
 */
export function promptCacheKeyFor(sessionId: string): string {
  if (sessionId.length <= MAX_PROMPT_CACHE_KEY_LENGTH) return sessionId;
  const digest = createHash("sha256").update(sessionId).digest("hex").slice(0, 16);
  return `${sessionId.slice(0, MAX_PROMPT_CACHE_KEY_LENGTH - 17)}:${digest}`;
}

/** The providers whose prompt caching ctxkit steers. */
export type CachingProvider = "anthropic" | "openai";

/**
 * The provider whose prompt caching applies to a model, and the model id: from an AI SDK model's `provider`
 * (`anthropic.messages`, `vertex.anthropic.messages`, `openai.responses`, `openai.chat`) or a gateway id
 * (`anthropic/claude-sonnet-4.5`). Undefined for other providers.
 *
 * @example
 * cachingTarget(anthropic("claude-sonnet-4-5")); // { provider: "anthropic", modelId: "claude-sonnet-4-5" }
 */
export function cachingTarget(
  model: LanguageModel | undefined,
): { provider: CachingProvider; modelId: string } | undefined {
  if (model === undefined) return undefined;
  if (typeof model === "string") return fromGatewayId(model);
  if (model.provider === "gateway") return fromGatewayId(model.modelId);
  const parts = model.provider.split(".");
  if (parts.includes("anthropic")) return { provider: "anthropic", modelId: model.modelId };
  if (parts[0] === "openai") return { provider: "openai", modelId: model.modelId };
  return undefined;
}

function fromGatewayId(id: string): { provider: CachingProvider; modelId: string } | undefined {
  const [provider, ...rest] = id.split("/");
  return provider === "anthropic" || provider === "openai"
    ? { provider, modelId: rest.join("/") }
    : undefined;
}

/** What `withPromptCaching` needs besides the options. */
export interface PromptCachingContext extends PromptCachingOptions {
  readonly model?: LanguageModel | undefined;
  /** The conversation's session id: the default OpenAI cache key. */
  readonly sessionId?: string | undefined;
  /** Trailing messages of this request only (ctxkit's budget-exit notice). */
  readonly ephemeralTail?: number;
  /** Counts tokens for Anthropic's minimum-length check. Default: ctxkit's Claude estimator. */
  readonly countTokens?: (text: string) => number;
  /** Indices of `messages` worth an Anthropic breakpoint besides the newest (the governor's cache anchors). */
  readonly cacheAnchors?: readonly number[];
}

/**
 * Applies the model's prompt caching to an AI SDK prompt: Anthropic breakpoints on copies of the marked
 * messages and tools (`withAiSdkBreakpoints`), or OpenAI's `promptCacheKey` in the returned call-level
 * `providerOptions` (unless the call's own options already set one). Other providers cache implicitly; their
 * prompt comes back as it was.
 *
 * @example
 * const cached = withPromptCaching({ system, messages }, { model, sessionId: "s1" });
 * await generateText({ model, instructions: cached.system, messages: cached.messages, providerOptions: cached.providerOptions });
 */
export function withPromptCaching<
  System extends CacheableAiSdkMessage,
  Message extends CacheableAiSdkMessage,
  Tool extends CacheableAiSdkTool = CacheableAiSdkTool,
>(
  input: AiSdkBreakpointInput<System, Message, Tool>,
  context: PromptCachingContext,
): {
  system: System[];
  messages: Message[];
  tools: Tool[] | undefined;
  providerOptions: ProviderOptions | undefined;
} {
  const target = cachingTarget(context.model);
  const unchanged = {
    system: [...input.system],
    messages: [...input.messages],
    tools: input.tools === undefined ? undefined : [...input.tools],
    providerOptions: input.providerOptions,
  };
  if (target?.provider === "anthropic" && context.cacheBreakpoints !== false) {
    const marked = withAiSdkBreakpoints(input, {
      model: target.modelId,
      ...(context.cacheTtl !== undefined && { ttl: context.cacheTtl }),
      ...(context.ephemeralTail !== undefined && { ephemeralTail: context.ephemeralTail }),
      ...(context.countTokens !== undefined && { countTokens: context.countTokens }),
      ...(context.cacheAnchors !== undefined && { anchors: context.cacheAnchors }),
    });
    return { ...marked, providerOptions: input.providerOptions };
  }
  const key = context.promptCacheKey ?? context.sessionId;
  const openai = input.providerOptions?.["openai"];
  if (target?.provider === "openai" && typeof key === "string" && openai?.["promptCacheKey"] === undefined)
    return {
      ...unchanged,
      providerOptions: {
        ...input.providerOptions,
        openai: { ...openai, promptCacheKey: promptCacheKeyFor(key) },
      },
    };
  return unchanged;
}
