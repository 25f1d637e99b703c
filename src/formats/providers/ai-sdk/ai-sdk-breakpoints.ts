import {
  planAnthropicBreakpoints,
  type BreakpointPosition,
  type CacheBreakpoint,
  type CacheTtl,
} from "../anthropic/cache-breakpoints.ts";
import { anthropicMinimumCacheableTokens } from "../../../pricing/cache-minimums.ts";
import { countableText, estimateClaudeTokens, prefixTokens } from "../anthropic/prefix-tokens.ts";
import type { ProviderOptions } from "./ai-sdk-types.ts";

/** A message of an AI SDK prompt: a `ModelMessage`, or a `LanguageModelV4Message` inside a middleware. */
export interface CacheableAiSdkMessage {
  readonly role: string;
  readonly content: unknown;
  readonly providerOptions?: ProviderOptions | undefined;
}

/** A tool definition of a provider call (`LanguageModelV4FunctionTool` or a provider tool). */
export interface CacheableAiSdkTool {
  readonly type: string;
  readonly providerOptions?: ProviderOptions | undefined;
}

/** What `withAiSdkBreakpoints` marks. */
export interface AiSdkBreakpointInput<
  System extends CacheableAiSdkMessage,
  Message extends CacheableAiSdkMessage,
  Tool extends CacheableAiSdkTool,
> {
  /** The system messages (`instructions`, or the leading system messages of a provider prompt). */
  readonly system: readonly System[];
  /** The other messages, in order. */
  readonly messages: readonly Message[];
  /** Tool definitions that can carry `providerOptions` (a middleware's `params.tools`); none in `prepareStep`. */
  readonly tools?: readonly Tool[] | undefined;
  /** The call's `providerOptions`: Anthropic's automatic caching set there takes one of the four. */
  readonly providerOptions?: ProviderOptions | undefined;
}

/** Options of `withAiSdkBreakpoints`. */
export interface AiSdkBreakpointOptions {
  /** The model id, for its minimum cacheable prefix. */
  readonly model?: string;
  /** The minimum cacheable prefix in tokens; overrides the model's. */
  readonly minTokens?: number;
  /** TTL of the breakpoints added. Default `5m`. */
  readonly ttl?: CacheTtl;
  /** Trailing messages of this request only (ctxkit's budget-exit notice). Default 0. */
  readonly ephemeralTail?: number;
  /** Counts tokens for the minimum-length check. Default: ctxkit's Claude estimator. */
  readonly countTokens?: (text: string) => number;
  /**
   * Indices of `messages` worth a breakpoint besides the newest messages, oldest first: the governor's cache
   * anchors (`GovernedRequest.cacheAnchors`) as positions in this prompt (`PreparedRequest.toAiSdk` maps them).
   */
  readonly anchors?: readonly number[];
}

type Control = { type: "ephemeral"; ttl?: "1h" };

const asRecord = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;

/** The cache-control values in provider options, under any provider's key (`cacheControl` or `cache_control`). */
function controlsIn(options: unknown): CacheTtl[] {
  const ttls: CacheTtl[] = [];
  for (const value of Object.values(asRecord(options) ?? {})) {
    const control = asRecord(asRecord(value)?.["cacheControl"] ?? asRecord(value)?.["cache_control"]);
    if (control !== undefined) ttls.push(control["ttl"] === "1h" ? "1h" : "5m");
  }
  return ttls;
}

/** Markers on a message and on its parts (a tool result's output included). */
function messageControls(message: CacheableAiSdkMessage): CacheTtl[] {
  const ttls = controlsIn(message.providerOptions);
  if (!Array.isArray(message.content)) return ttls;
  for (const part of message.content as unknown[]) {
    ttls.push(...controlsIn(asRecord(part)?.["providerOptions"]));
    const output = asRecord(asRecord(part)?.["output"]);
    ttls.push(...controlsIn(output?.["providerOptions"]));
    if (Array.isArray(output?.["value"]))
      for (const item of output["value"] as unknown[])
        ttls.push(...controlsIn(asRecord(item)?.["providerOptions"]));
  }
  return ttls;
}

function withControl<Item extends { readonly providerOptions?: ProviderOptions | undefined }>(
  item: Item,
  ttl: CacheTtl,
): Item {
  const control: Control = ttl === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" };
  const providerOptions = item.providerOptions ?? {};
  return {
    ...item,
    providerOptions: {
      ...providerOptions,
      anthropic: { ...providerOptions["anthropic"], cacheControl: control },
    },
  };
}

const isEmpty = (message: CacheableAiSdkMessage): boolean =>
  message.content === "" || (Array.isArray(message.content) && message.content.length === 0);

/**
 * Adds Anthropic prompt-cache breakpoints to an AI SDK prompt as `providerOptions.anthropic.cacheControl`, where
 * `planAnthropicBreakpoints` puts them: the last function tool (when tools are given), the last system message,
 * the newest stable message, the `anchors` and the message before the newest assistant message. A message-level marker is
 * what the AI SDK's Anthropic provider writes on the message's last part, so a tool message's breakpoint lands on
 * its last tool result even when the provider merges a following user message into the same Anthropic message.
 * Markers the caller set (on messages, parts, tool outputs, tools, or the call's automatic caching) are kept and
 * counted: never more than four in all. Marked items are copies; the inputs are not changed.
 *
 * @example
 * const marked = withAiSdkBreakpoints({ system: instructions, messages }, { model: "claude-sonnet-4-5" });
 * await generateText({ model, instructions: marked.system, messages: marked.messages });
 */
export function withAiSdkBreakpoints<
  System extends CacheableAiSdkMessage,
  Message extends CacheableAiSdkMessage,
  Tool extends CacheableAiSdkTool = CacheableAiSdkTool,
>(
  input: AiSdkBreakpointInput<System, Message, Tool>,
  options: AiSdkBreakpointOptions = {},
): { system: System[]; messages: Message[]; tools: Tool[] | undefined } {
  const system = [...input.system];
  const messages = [...input.messages];
  const tools = input.tools === undefined ? undefined : [...input.tools];
  const systemAt = system.findLastIndex((message) => !isEmpty(message));
  const toolAt = tools?.findLastIndex((tool) => tool.type === "function") ?? -1;

  const existing: CacheBreakpoint[] = [];
  const add = (position: BreakpointPosition, ttls: readonly CacheTtl[]) =>
    existing.push(...ttls.map((ttl) => ({ position, ttl })));
  for (const tool of tools ?? []) add({ at: "tools" }, controlsIn(tool.providerOptions));
  for (const message of system) add({ at: "system" }, messageControls(message));
  messages.forEach((message, index) => add({ at: "message", index }, messageControls(message)));
  if (messages.length > 0)
    add(
      { at: "message", index: messages.length - 1 },
      controlsIn({ anthropic: input.providerOptions?.["anthropic"] }),
    );

  const minTokens = options.minTokens ?? anthropicMinimumCacheableTokens(options.model);
  const count = options.countTokens ?? estimateClaudeTokens;
  const sizeOf = (part: number): number => {
    if (part === 0) return tools === undefined || tools.length === 0 ? 0 : count(countableText(tools));
    if (part === 1) return count(system.map((message) => countableText(message.content)).join("\n"));
    return count(countableText(messages[part - 2]!.content));
  };
  const through = prefixTokens(sizeOf, minTokens);
  const planned = planAnthropicBreakpoints({
    messageCount: messages.length,
    newestAssistantIndex: messages.findLastIndex((message) => message.role === "assistant"),
    ephemeralTail: options.ephemeralTail ?? 0,
    ...(options.anchors !== undefined && { anchors: options.anchors }),
    hasTools: toolAt >= 0,
    hasSystem: systemAt >= 0,
    tokensThrough: (position) =>
      through(position.at === "tools" ? 0 : position.at === "system" ? 1 : 2 + position.index),
    existing,
    minTokens,
    ...(options.ttl !== undefined && { ttl: options.ttl }),
  });
  for (const { position, ttl } of planned) {
    if (position.at === "tools") tools![toolAt] = withControl(tools![toolAt]!, ttl);
    else if (position.at === "system") system[systemAt] = withControl(system[systemAt]!, ttl);
    else if (!isEmpty(messages[position.index]!))
      messages[position.index] = withControl(messages[position.index]!, ttl);
  }
  return { system, messages, tools };
}
