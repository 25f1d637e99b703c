import type { Message } from "../model/message.ts";
import type { CacheProfile } from "../pricing/cache-profile.ts";
import { longInputTokens } from "./processors/elide-older-tool-inputs.ts";
import { MIN_OFFLOAD_TOKENS } from "./processors/tool-output-offload.ts";
import { resultsOf } from "./tool-output-text.ts";

/** What the provider's prompt cache holds after a request, as governance can know it. */
export interface CachedPrefix {
  /** When the request was sent (the governor's clock, ms). */
  readonly at: number;
  /**
   * View indices whose prefix (system prompt and tools, then the messages through the index) the request left
   * cached: where its Anthropic breakpoints sat. −1 stands for the system prompt and tools alone. Automatic
   * caches (OpenAI, Gemini) hold every prefix; there the list only bounds what was sent.
   */
  readonly ends: readonly number[];
}

/**
 * Where rewriting a view from `firstChange` on starts writing to the cache instead of reading from it: just after
 * the longest prefix the provider still holds that the rewrite leaves intact — any index for automatic caches,
 * only a breakpoint's for Anthropic's. Undefined when nothing is cached any more (no cache, or the last request
 * is older than the cache's lifetime): then the next request writes everything anyway, and a rewrite costs
 * nothing extra.
 *
 * @example
 * rewriteStart(40, { at, ends: [-1, 12, 58, 60] }, cacheProfiles.anthropic, now) // 13: read through message 12
 */
export function rewriteStart(
  firstChange: number,
  cached: CachedPrefix | undefined,
  profile: Pick<CacheProfile, "provider" | "ttlMs" | "lookbackBlocks">,
  now: number,
): number | undefined {
  if (profile.provider === "none" || cached === undefined || now - cached.at > profile.ttlMs)
    return undefined;
  if (profile.lookbackBlocks === 0) return firstChange;
  let start = 0;
  for (const end of cached.ends) if (end < firstChange) start = Math.max(start, end + 1);
  return start;
}

/**
 * The cache anchor of a view: the last message before the first one a checkpoint could still change (a tool
 * output not yet offloaded that is large enough to offload or carries a compact summary, a call with arguments
 * above `inputsAbove` tokens that elision could shorten), searched from the newest summary on. A breakpoint there
 * keeps the settled part of the history cached while a checkpoint rewrites what follows it; without one,
 * Anthropic's cache would be read back only through the system prompt after any rewrite. A small output no
 * processor will ever shorten does not hold the anchor back: it stays as it is. Undefined when nothing before
 * such a message is worth holding.
 *
 * @example
 * cacheAnchor(view, 250, governor.tokensOf) // 17: messages 0…17 stay as they are at the next checkpoint
 */
export function cacheAnchor(
  messages: readonly Message[],
  inputsAbove: number,
  tokensOf: (message: Message) => number,
): number | undefined {
  const from = messages.findLastIndex((message) => message.kind === "summary");
  for (let index = Math.max(0, from); index < messages.length; index++) {
    const message = messages[index]!;
    if (changeable(message, inputsAbove, tokensOf)) return index > 0 ? index - 1 : undefined;
  }
  return undefined;
}

/**
 * `cacheAnchor` of a list that only grows at its end between calls (a governor's view between checkpoints): what
 * was searched is not searched again, so a call costs what was appended since. Another list, a shorter one or
 * another `inputsAbove` is searched whole.
 *
 * @example
 * const anchors = new AppendOnlyCacheAnchor();
 * anchors.anchor(view, 250, governor.tokensOf); // the same as cacheAnchor(view, 250, governor.tokensOf)
 */
export class AppendOnlyCacheAnchor {
  #list: readonly Message[] | undefined;
  #length = 0;
  #inputsAbove = 0;
  /** The first message a checkpoint could change, from the newest summary on, once found. */
  #changeable: number | undefined;

  anchor(
    messages: readonly Message[],
    inputsAbove: number,
    tokensOf: (message: Message) => number,
  ): number | undefined {
    const grown =
      messages === this.#list && messages.length >= this.#length && inputsAbove === this.#inputsAbove;
    let from = grown ? this.#length : 0;
    // The search starts at the newest summary: a new one starts it again.
    const summary = findLastSummary(messages, from);
    if (!grown || summary >= 0) {
      this.#changeable = undefined;
      from = Math.max(0, summary);
    }
    if (this.#changeable === undefined) {
      for (let index = from; index < messages.length; index++) {
        if (!changeable(messages[index]!, inputsAbove, tokensOf)) continue;
        this.#changeable = index;
        break;
      }
    }
    this.#list = messages;
    this.#length = messages.length;
    this.#inputsAbove = inputsAbove;
    const first = this.#changeable;
    return first === undefined || first === 0 ? undefined : first - 1;
  }
}

/** Index of the newest summary at or after `from`, or −1. */
function findLastSummary(messages: readonly Message[], from: number): number {
  for (let index = messages.length - 1; index >= from; index--)
    if (messages[index]!.kind === "summary") return index;
  return -1;
}

function changeable(message: Message, inputsAbove: number, tokensOf: (message: Message) => number): boolean {
  if (message.role === "tool") {
    const open = resultsOf(message).filter((result) => result.offloadRef === undefined);
    if (open.some((result) => result.compactSummary !== undefined)) return true;
    if (open.length > 0 && tokensOf(message) >= MIN_OFFLOAD_TOKENS) return true;
  }
  return longInputTokens(message, inputsAbove) > 0;
}
