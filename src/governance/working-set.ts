import { toolCallsOf } from "../model/blocks.ts";
import type { JsonValue, Message } from "../model/message.ts";
import { stepEnd } from "../model/tool-pairing.ts";
import { touchedPaths } from "../summarize/history-digest.ts";
import { computeBoundaries, offloadThresholds } from "./boundaries.ts";
import { cacheProfiles } from "../pricing/cache-profile.ts";
import type { CachePricing } from "./cache-economics.ts";
import type { ProcessorContext } from "./processor.ts";
import { sumTokens } from "./processor.ts";
import { resultsOf } from "./tool-output-text.ts";

/** Outputs smaller than this are cheap to read again and not worth holding back from governance. */
const MIN_WORKING_OUTPUT_TOKENS = 200;

/**
 * The chance that the agent needs a file's text again at the next step, k steps after it last touched the file,
 * taken as NEED_AGAIN / (k + 1). Measured on the shared transcripts after 421 reads: the next step edits the
 * file (and so needs the text it read) with probability 0.15 right after the read, far less later; any touch
 * at all (re-reads included, which need nothing old) has a product of a median 0.25 over k = 0…19.
 */
const NEED_AGAIN = 0.15;

/** Arguments that carry what a call writes: such a call's output is a confirmation, not the file's content. */
const WRITE_KEYS = [
  "old_string",
  "new_string",
  "old_str",
  "new_str",
  "content",
  "file_text",
  "edits",
  "patch",
];

function writes(input: JsonValue): boolean {
  if (typeof input === "string") return true;
  if (input === null || typeof input !== "object" || Array.isArray(input)) return false;
  return WRITE_KEYS.some((key) => key in input);
}

/** Settings of `workingSet`. */
export interface WorkingSetOptions {
  /** Cache prices: keeping an output costs a cached read per request; reading it again costs a request. */
  readonly pricing: CachePricing;
  /** Tokens of the whole payload: what one more request (to read a file again) re-reads. */
  readonly payloadTokens: number;
  /** Tokens of outputs kept at most. */
  readonly budget: number;
  /** Outputs from this index on are protected anyway (the newest step, the protection window): not counted. */
  readonly protectedFrom: number;
}

/**
 * The agent's working set: the newest verbatim output of each file a call read on its own (not a write's
 * confirmation), kept while keeping it is cheaper than reading it again. Each request the output stays costs
 * its tokens at the cache read price; dropping it costs, if the agent needs the file again, one more request
 * (the payload re-read) and the output written anew. An output is kept until the rent paid since its file was
 * last touched — by any call — reaches that price (the ski-rental rule: never more than twice the cost of the
 * best choice made knowing the future). Returns the indices of the kept tool messages, most recently touched
 * files first, within the budget.
 *
 * @example
 * const keep = workingSet(view, tokensOf, {
 *   pricing: cacheProfiles.anthropic, payloadTokens: 40_000, budget: 16_000, protectedFrom: view.length,
 * });
 */
export function workingSet(
  messages: readonly Message[],
  tokensOf: (message: Message) => number,
  options: WorkingSetOptions,
): Set<number> {
  const kept = new Set<number>();
  if (options.budget === 0) return kept;
  /** File → steps since a call last touched it (0 for the newest step). */
  const idleSteps = new Map<string, number>();
  const outputs = new Map<string, number>();
  let steps = 0;
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (message.role !== "assistant") continue;
    const end = stepEnd(messages, index);
    for (const call of toolCallsOf(message)) {
      const targets = touchedPaths(call.input);
      for (const path of targets) if (!idleSteps.has(path)) idleSteps.set(path, steps);
      if (targets.length !== 1 || writes(call.input) || outputs.has(targets[0]!)) continue;
      for (let at = index + 1; at < end; at++) {
        const results = resultsOf(messages[at]!);
        if (!results.some((block) => block.callId === call.id)) continue;
        // An output already governed marks its file as seen: an older verbatim read of it would be stale.
        outputs.set(targets[0]!, results.every((block) => block.offloadRef === undefined) ? at : -1);
        break;
      }
    }
    steps++;
  }
  const { pricing, payloadTokens } = options;
  let spent = 0;
  for (const [path, at] of [...outputs].sort((a, b) => idleSteps.get(a[0])! - idleSteps.get(b[0])!)) {
    if (at < 0 || at >= options.protectedFrom) continue;
    const tokens = tokensOf(messages[at]!);
    if (tokens < MIN_WORKING_OUTPUT_TOKENS || spent + tokens > options.budget) continue;
    const rent = tokens * pricing.read;
    const readAgain = payloadTokens * pricing.read + tokens * pricing.write;
    if (rent * (idleSteps.get(path)! + 1) > NEED_AGAIN * readAgain) continue;
    spent += tokens;
    kept.add(at);
  }
  return kept;
}

/** The working set of a view under the context's policy (see `workingSet`); empty when the policy disables it. */
export function workingSetOf(
  messages: readonly Message[],
  context: Pick<ProcessorContext, "policy" | "window" | "tokensOf" | "fixedTokens">,
): Set<number> {
  const { protectedToolsFrom } = computeBoundaries(
    messages,
    context.tokensOf,
    offloadThresholds(context).protect,
  );
  return workingSet(messages, context.tokensOf, {
    protectedFrom: protectedToolsFrom,
    pricing: cacheProfiles[context.policy.pricing],
    payloadTokens: context.fixedTokens + sumTokens(messages, context.tokensOf),
    budget: Math.min(context.policy.workingSetTokens, Math.floor(context.window.usable * 0.15)),
  });
}
