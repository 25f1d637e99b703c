import type { Message, ToolCallBlock } from "../model/message.ts";
import { cacheProfiles } from "../pricing/cache-profile.ts";
import { governancePricing } from "./governor-settings.ts";
import { contextKind } from "../metrics/context-kind.ts";
import type { ProcessorContext } from "./processor.ts";
import { sumTokens } from "./processor.ts";
import { reuseRate } from "./reuse-rates.ts";

/** What a re-read adds besides the output: the call the agent writes, and its framing. */
const REREAD_CALL_TOKENS = 60;

/**
 * The context the agent is still likely to need verbatim: the tool outputs it may read from and the text its own
 * edits and writes carried, as indices into `messages`. A piece stays needed while either
 * - the chance that the next reply uses it (`reuseRate`: measured, by kind and age in requests) is at least the
 *   miss rate the user accepts, `1 − groundingTarget` — what the agent will use is kept with that confidence; or
 * - keeping it one more request (its tokens at the cache read price) costs less than that chance times getting it
 *   back (one more request over the payload, read from cache, plus the piece written anew, at Anthropic's write
 *   premium at least whoever bills, so both pricings keep the same) — small pieces stay long because they are
 *   cheap to keep.
 * Both fall with age (the rates are fitted not to rise), so a piece let go is not needed again while the rates
 * stand; as the session's own reuse moves them (`SessionReuse`), one may be — an offloaded output stays
 * recallable. The newest step (age 0) is protected anyway.
 * The pieces kept, the most likely needed first, may fill the view up to `neededShare` of the usable window; when
 * the rest of the view leaves them less, they still get what compaction keeps as its tail (`tailShare` of it).
 *
 * @example
 * const needed = neededContext(view, context); // offloading, elision, truncation and summaries leave these alone
 */
export function neededContext(
  messages: readonly Message[],
  context: Pick<ProcessorContext, "settings" | "window" | "tokensOf" | "fixedTokens" | "reuseRates">,
): Set<number> {
  const needed = new Set<number>();
  const missRate = 1 - context.settings.groundingTarget;
  if (context.settings.groundingTarget === 0) return needed;
  const pricing = governancePricing(context.settings);
  // What the agent keeps must not depend on who bills it: a provider without a write premium (OpenAI) makes a
  // re-read look cheaper, but the agent misses the piece all the same. A re-read is priced with the write premium
  // of Anthropic's cache at least, so both pricings keep the same pieces (measured: bench, both pricings).
  const rereadWrite = Math.max(pricing.write, cacheProfiles.anthropic.write);
  const payload = context.fixedTokens + sumTokens(messages, context.tokensOf);
  const calls = new Map<string, Pick<ToolCallBlock, "name" | "input">>();
  for (const message of messages)
    for (const block of message.content) if (block.type === "tool-call") calls.set(block.id, block);
  const candidates: { index: number; rate: number; tokens: number }[] = [];
  // A piece's age is the replies since it arrived: the assistant messages after it (a written piece arrives as
  // context with the request after the reply that carried it, like that reply's results).
  let repliesAfter = 0;
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    const age = repliesAfter;
    if (message.role === "assistant" && message.kind === undefined) repliesAfter++;
    const kind = contextKind(message, calls);
    if (kind === undefined || message.kind !== undefined) continue;
    const rate = reuseRate(kind, age, context.reuseRates ?? context.settings.reuseRates);
    const tokens = context.tokensOf(message);
    const readAgain = payload * pricing.read + (tokens + REREAD_CALL_TOKENS) * rereadWrite;
    if (rate >= missRate || rate * readAgain >= tokens * pricing.read)
      candidates.push({ index, rate, tokens });
  }
  const rest = payload - candidates.reduce((sum, candidate) => sum + candidate.tokens, 0);
  const { usable } = context.window;
  let budget = Math.max(
    Math.floor(usable * context.settings.tailShare),
    Math.floor(usable * context.settings.neededShare) - rest,
  );
  for (const candidate of candidates.sort((a, b) => b.rate - a.rate || b.index - a.index)) {
    if (candidate.tokens > budget) continue;
    budget -= candidate.tokens;
    needed.add(candidate.index);
  }
  return needed;
}
