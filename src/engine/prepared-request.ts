import type { Inspection } from "../assembly/inspect.ts";
import type { Payload } from "../assembly/payload.ts";
import type { GovernanceEvent } from "../governance/events.ts";
import type { RequestTokens } from "../governance/governor.ts";
import type { LoopDetection } from "../governance/loop-detector.ts";
import type { LanguageModel, ModelMessage, SystemModelMessage } from "ai";
import { toAiSdk } from "../formats/providers/ai-sdk/to-ai-sdk.ts";
import type { ProviderOptions } from "../formats/providers/ai-sdk/ai-sdk-types.ts";
import { withPromptCaching, type PromptCachingOptions } from "../formats/providers/ai-sdk/prompt-caching.ts";
import type { AnthropicRequestPayload } from "../formats/providers/anthropic/anthropic-message.ts";
import { toAnthropicTools } from "../formats/providers/anthropic/anthropic-tools.ts";
import type { CacheTtl } from "../formats/providers/anthropic/cache-breakpoints.ts";
import { ephemeralTail } from "../formats/providers/anthropic/ephemeral-tail.ts";
import { anthropicAnchors } from "../formats/providers/anthropic/anthropic-anchors.ts";
import { toAnthropic } from "../formats/providers/anthropic/to-anthropic.ts";
import { withAnthropicBreakpoints } from "../formats/providers/anthropic/with-anthropic-breakpoints.ts";
import { toGemini } from "../formats/providers/gemini/index.ts";
import { anchorPositions } from "../formats/providers/anchor-positions.ts";
import { toOpenAIChat } from "../formats/providers/openai-chat/index.ts";
import type { JsonValue } from "../model/message.ts";

/** A tool the model may call: name, description and JSON-schema input, as every provider takes them. */
export interface ToolDefinition {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema?: JsonValue;
}

/** Options of `PreparedRequest.toAnthropic`. */
export interface AnthropicRequestOptions {
  /**
   * Prompt-cache breakpoints (`cache_control`) on the last tool, the system prompt and the two newest stable
   * messages (see `withAnthropicBreakpoints`). Default true; false sends none.
   */
  readonly cacheBreakpoints?: boolean;
  /** TTL of the breakpoints: `5m` (default) or `1h`. */
  readonly cacheTtl?: CacheTtl;
  /** The Anthropic model the request is for: sets the minimum cacheable prefix (default 1,024 tokens). */
  readonly model?: string;
}

/** Options of `PreparedRequest.toAiSdk`: the model it is for, and how to ask it to cache the prompt. */
export interface AiSdkRequestOptions extends PromptCachingOptions {
  /** The model the request goes to; its provider decides the caching hints (none without it). */
  readonly model?: LanguageModel;
}

/** What `generateText` / `streamText` take from a prepared request. */
export interface AiSdkRequest {
  instructions?: SystemModelMessage[];
  messages: ModelMessage[];
  /** Call-level options (OpenAI's `promptCacheKey`), when the model's provider takes any. */
  providerOptions?: ProviderOptions;
}

/**
 * A governed, assembled request, provider-neutral, with converters to each provider's format and the
 * inspection report (tokens per channel, governance events).
 */
export class PreparedRequest {
  /** The session the request belongs to (the default OpenAI prompt-cache key). */
  readonly sessionId: string;
  readonly payload: Payload;
  readonly tools: readonly ToolDefinition[];
  readonly tokens: RequestTokens;
  readonly events: readonly GovernanceEvent[];
  readonly inspection: Inspection;
  /** True when this request rewrote earlier history (a compaction or a truncation/offload batch). */
  readonly checkpoint: boolean;
  readonly loop: LoopDetection | undefined;
  /**
   * Indices in `messages` of the prefixes the governor wants cached besides the newest messages
   * (`GovernedRequest.cacheAnchors`): `toAnthropic` and `toAiSdk` put Anthropic breakpoints there.
   */
  readonly cacheAnchors: readonly number[];

  /** @internal Created by `EngineSession.prepare()`. */
  constructor(fields: {
    sessionId: string;
    payload: Payload;
    tools: readonly ToolDefinition[];
    tokens: RequestTokens;
    events: readonly GovernanceEvent[];
    inspection: Inspection;
    checkpoint: boolean;
    loop: LoopDetection | undefined;
    cacheAnchors?: readonly number[];
  }) {
    this.sessionId = fields.sessionId;
    this.payload = fields.payload;
    this.tools = fields.tools;
    this.tokens = fields.tokens;
    this.events = fields.events;
    this.inspection = fields.inspection;
    this.checkpoint = fields.checkpoint;
    this.loop = fields.loop;
    this.cacheAnchors = fields.cacheAnchors ?? [];
  }

  /** The system prompt. */
  get system(): string {
    return this.payload.system;
  }

  /** The governed messages, in order (no system message: see `system`). */
  get messages(): Payload["messages"] {
    return this.payload.messages;
  }

  /** OpenAI Chat Completions `messages`, system prompt first. */
  toOpenAIChat(): ReturnType<typeof toOpenAIChat> {
    return toOpenAIChat(this.#withSystem());
  }

  /**
   * Anthropic Messages `{ tools, system, messages }` (`tools` only when the request has some), with prompt-cache
   * breakpoints unless `cacheBreakpoints: false`. The budget-exit notice, sent with this request only, gets no
   * breakpoint: the newest stable block before it does.
   *
   * @example
   * const body = request.toAnthropic({ model: "claude-sonnet-4-5" });
   * await anthropic.messages.create({ model: "claude-sonnet-4-5", max_tokens: 4096, ...body });
   */
  toAnthropic(options: AnthropicRequestOptions = {}): AnthropicRequestPayload {
    const messages = this.#withSystem();
    const converted = toAnthropic(messages);
    const payload: AnthropicRequestPayload =
      this.tools.length === 0 ? converted : { tools: toAnthropicTools(this.tools), ...converted };
    if (options.cacheBreakpoints === false) return payload;
    const tail = this.payload.messages.slice(
      this.payload.messages.length - ephemeralTail(this.payload.messages),
    );
    return withAnthropicBreakpoints(payload, {
      ...(options.model !== undefined && { model: options.model }),
      ...(options.cacheTtl !== undefined && { ttl: options.cacheTtl }),
      ephemeralBlocks: tail.reduce((sum, message) => sum + message.content.length, 0),
      anchors: anthropicAnchors(messages, this.#anchorIndices(messages), converted.messages),
    });
  }

  /**
   * AI SDK `{ instructions, messages, providerOptions }` for `generateText` / `streamText`, with the prompt-cache
   * hints of `model`'s provider: Anthropic breakpoints (`providerOptions.anthropic.cacheControl` on the system
   * prompt and the two newest stable messages) or OpenAI's `promptCacheKey` (the session id by default).
   *
   * @example
   * const result = streamText({ model, ...request.toAiSdk({ model }) });
   */
  toAiSdk(options: AiSdkRequestOptions = {}): AiSdkRequest {
    const messages = this.#withSystem();
    const prompt = toAiSdk(messages);
    // A marker goes on a whole AI SDK message: an anchor counts only where its prefix ends one.
    const anchors = anchorPositions(
      messages,
      this.#anchorIndices(messages),
      (prefix) => toAiSdk(prefix).messages,
      (message) => (typeof message.content === "string" ? [message.content] : message.content),
      prompt.messages,
    ).flatMap(({ message, parts }) => {
      const whole = prompt.messages[message]!.content;
      return parts === (typeof whole === "string" ? 1 : whole.length) ? [message] : [];
    });
    const cached = withPromptCaching(
      { system: prompt.instructions ?? [], messages: prompt.messages },
      {
        ...options,
        sessionId: this.sessionId,
        ephemeralTail: ephemeralTail(this.payload.messages),
        cacheAnchors: anchors,
      },
    );
    return {
      ...(cached.system.length > 0 && { instructions: cached.system }),
      messages: cached.messages,
      ...(cached.providerOptions !== undefined && { providerOptions: cached.providerOptions }),
    };
  }

  /** Gemini `{ systemInstruction, contents }`. */
  toGemini(): ReturnType<typeof toGemini> {
    return toGemini(this.#withSystem());
  }

  /** `cacheAnchors` as indices in `messages` (the payload's messages, after the system message when there is one). */
  #anchorIndices(messages: readonly unknown[]): number[] {
    const shift = messages.length - this.payload.messages.length;
    return this.cacheAnchors.map((anchor) => anchor + shift);
  }

  #withSystem(): Payload["messages"] {
    if (this.payload.system === "") return this.payload.messages;
    const first = this.payload.messages[0];
    return [
      {
        id: "system",
        sessionId: first?.sessionId ?? "",
        seq: -1,
        turn: 0,
        role: "system",
        content: [{ type: "text", text: this.payload.system }],
        createdAt: first?.createdAt ?? new Date(0).toISOString(),
      },
      ...this.payload.messages,
    ];
  }
}
