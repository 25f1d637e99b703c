import type {
  AnthropicCacheControl,
  AnthropicMessage,
  AnthropicTextBlock,
  AnthropicTool,
} from "./anthropic-message.ts";
import {
  planAnthropicBreakpoints,
  type BreakpointPosition,
  type CacheBreakpoint,
  type CacheTtl,
} from "./cache-breakpoints.ts";
import { anthropicMinimumCacheableTokens } from "../../../pricing/cache-minimums.ts";
import { countableText, estimateClaudeTokens, prefixTokens } from "./prefix-tokens.ts";

/** Options of `withAnthropicBreakpoints`. */
export interface AnthropicBreakpointOptions {
  /** The model, for its minimum cacheable prefix (`anthropicMinimumCacheableTokens`). */
  readonly model?: string;
  /** The minimum cacheable prefix in tokens; overrides the model's. */
  readonly minTokens?: number;
  /** TTL of the breakpoints added. Default `5m`. */
  readonly ttl?: CacheTtl;
  /**
   * Content blocks at the end of the messages that exist in this request only (ctxkit's budget-exit notice,
   * which the Anthropic converter puts in the same user message as the tool results before it): no breakpoint
   * goes on or after them. Default 0.
   */
  readonly ephemeralBlocks?: number;
  /** Counts tokens for the minimum-length check. Default: ctxkit's Claude estimator. */
  readonly countTokens?: (text: string) => number;
  /**
   * Prefixes worth a breakpoint besides the newest messages, oldest first: the governor's cache anchors
   * (`GovernedRequest.cacheAnchors`) as positions in this request (`PreparedRequest.toAnthropic` maps them).
   */
  readonly anchors?: readonly AnthropicAnchor[];
}

/**
 * The end of a cached prefix inside a Messages request: after the first `blocks` content blocks of message
 * `message` (the converter may have merged the anchored message with the ones after it into one message).
 */
export interface AnthropicAnchor {
  readonly message: number;
  readonly blocks: number;
}

/** The parts of an Anthropic Messages request that can carry breakpoints; other fields pass through. */
export interface AnthropicCacheableRequest {
  tools?: AnthropicTool[];
  system?: string | AnthropicTextBlock[];
  messages: AnthropicMessage[];
  /** Anthropic's automatic caching: one breakpoint on the last cacheable block, counted as the caller's. */
  cache_control?: AnthropicCacheControl;
}

type Block = Exclude<AnthropicMessage["content"], string>[number];

const controlOf = (ttl: CacheTtl): AnthropicCacheControl =>
  ttl === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" };
const ttlOf = (control: AnthropicCacheControl): CacheTtl => (control.ttl === "1h" ? "1h" : "5m");

function blocksOf(message: AnthropicMessage): readonly Block[] {
  return typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
}

/**
 * The `cache_control` breakpoints of an Anthropic Messages request, one entry per marker, at the position it
 * belongs to (a marker anywhere in a message counts for that message; the request-level automatic one for the
 * last message), in request order — e.g. to price the breakpoints a payload carries.
 *
 * @example
 * anthropicBreakpointsOf(withAnthropicBreakpoints(request)); // [{ position: { at: "system" }, ttl: "5m" }, …]
 */
export function anthropicBreakpointsOf(request: AnthropicCacheableRequest): CacheBreakpoint[] {
  const found: CacheBreakpoint[] = [];
  const add = (position: BreakpointPosition, control: AnthropicCacheControl | undefined) => {
    if (control !== undefined) found.push({ position, ttl: ttlOf(control) });
  };
  for (const tool of request.tools ?? []) add({ at: "tools" }, tool.cache_control);
  if (Array.isArray(request.system))
    for (const block of request.system) add({ at: "system" }, block.cache_control);
  request.messages.forEach((message, index) => {
    if (typeof message.content === "string") return;
    for (const block of message.content) {
      if ("cache_control" in block)
        add({ at: "message", index }, block.cache_control as AnthropicCacheControl);
      if (block.type === "tool_result" && Array.isArray(block.content))
        for (const inner of block.content)
          add({ at: "message", index }, inner.cache_control as AnthropicCacheControl | undefined);
    }
  });
  if (request.cache_control !== undefined && request.messages.length > 0)
    add({ at: "message", index: request.messages.length - 1 }, request.cache_control);
  return found;
}

/** Blocks Anthropic lets carry a breakpoint: not thinking (cached with its turn) and not empty text. */
function markable(block: Block): boolean {
  if (block.type === "thinking" || block.type === "redacted_thinking") return false;
  return block.type !== "text" || block.text !== "";
}

function markMessage(
  message: AnthropicMessage,
  end: number,
  control: AnthropicCacheControl,
): AnthropicMessage {
  const blocks = blocksOf(message);
  const at = blocks.slice(0, end).findLastIndex(markable);
  if (at < 0) return message;
  const content = blocks.map((block, index) => (index === at ? { ...block, cache_control: control } : block));
  return { ...message, content } as AnthropicMessage;
}

function markSystem(system: string | AnthropicTextBlock[], control: AnthropicCacheControl) {
  if (typeof system === "string") return [{ type: "text" as const, text: system, cache_control: control }];
  const at = system.findLastIndex((block) => block.text !== "");
  return system.map((block, index) => (index === at ? { ...block, cache_control: control } : block));
}

/**
 * Adds Anthropic prompt-cache breakpoints to a Messages request, where `planAnthropicBreakpoints` puts them:
 * the last tool definition, the system prompt's last block, the newest stable message, the `anchors` and the
 * message before the newest assistant message (each on its last block that can carry one). Breakpoints the caller set
 * (`cache_control` on tools, system blocks, message blocks or tool-result content, or the request's automatic
 * `cache_control`) are kept and counted, so there are never more than four. Returns a new request; the input is
 * not changed. A string `system` or message content becomes one text block when it gets a breakpoint.
 *
 * @example
 * const body = withAnthropicBreakpoints({ tools, system, messages }, { model: "claude-sonnet-4-5" });
 * await client.messages.create({ model: "claude-sonnet-4-5", max_tokens: 1024, ...body });
 */
export function withAnthropicBreakpoints<Request extends AnthropicCacheableRequest>(
  request: Request,
  options: AnthropicBreakpointOptions = {},
): Request {
  const { messages } = request;
  const tools = request.tools ?? [];
  const system = request.system;
  const hasSystem = typeof system === "string" ? system !== "" : (system ?? []).some((b) => b.text !== "");
  const minTokens = options.minTokens ?? anthropicMinimumCacheableTokens(options.model);
  const count = options.countTokens ?? estimateClaudeTokens;

  // Stable blocks per message: the ephemeral blocks are taken from the end.
  const stableEnd = messages.map((message) => blocksOf(message).length);
  let ephemeral = Math.max(0, options.ephemeralBlocks ?? 0);
  let ephemeralTail = 0;
  for (let index = messages.length - 1; index >= 0 && ephemeral > 0; index--) {
    const blocks = stableEnd[index]!;
    const taken = Math.min(ephemeral, blocks);
    stableEnd[index] = blocks - taken;
    ephemeral -= taken;
    if (taken === blocks) ephemeralTail++;
  }

  const sizeOf = (part: number): number => {
    if (part === 0) return tools.length === 0 ? 0 : count(countableText(tools));
    if (part === 1) return !hasSystem ? 0 : count(countableText(system));
    const index = part - 2;
    return count(countableText(blocksOf(messages[index]!).slice(0, stableEnd[index])));
  };
  const through = prefixTokens(sizeOf, minTokens);
  const newestAssistantIndex = messages.findLastIndex((message) => message.role === "assistant");
  const anchorEnds = new Map(
    (options.anchors ?? []).map((anchor) => [anchor.message, anchor.blocks] as const),
  );
  const planned = planAnthropicBreakpoints({
    messageCount: messages.length,
    newestAssistantIndex,
    ephemeralTail,
    anchors: [...anchorEnds.keys()],
    hasTools: tools.length > 0,
    hasSystem,
    tokensThrough: (position) =>
      through(position.at === "tools" ? 0 : position.at === "system" ? 1 : 2 + position.index),
    existing: anthropicBreakpointsOf(request),
    minTokens,
    ...(options.ttl !== undefined && { ttl: options.ttl }),
  });
  if (planned.length === 0) return request;

  const result: Request = { ...request, messages: [...messages] };
  for (const { position, ttl } of planned) {
    const control = controlOf(ttl);
    if (position.at === "tools")
      result.tools = tools.map((tool, index) =>
        index === tools.length - 1 ? { ...tool, cache_control: control } : tool,
      );
    else if (position.at === "system") result.system = markSystem(system!, control);
    else {
      const index = position.index;
      // An anchor's prefix may end inside its message; the newest messages' end where their stable blocks do.
      const newest = index === messages.length - 1 - ephemeralTail || index === newestAssistantIndex - 1;
      const end = Math.min(stableEnd[index]!, (!newest && anchorEnds.get(index)) || stableEnd[index]!);
      result.messages[index] = markMessage(messages[index]!, end, control);
    }
  }
  return result;
}

/**
 * Counts the `cache_control` breakpoints of an Anthropic Messages request (tools, system blocks, message blocks,
 * tool-result content and the automatic one), e.g. to check that it stays within Anthropic's four.
 *
 * @example
 * countAnthropicBreakpoints(withAnthropicBreakpoints(request)); // <= 4
 */
export function countAnthropicBreakpoints(request: AnthropicCacheableRequest): number {
  return anthropicBreakpointsOf(request).length;
}
