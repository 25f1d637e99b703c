import { z } from "zod";
import { validate } from "../model/schemas.ts";
import { reuseRatesSchema } from "./governor-settings.ts";
import { DEFAULT_REUSE_RATES_WEIGHT } from "./reuse-rates.ts";

const fraction = z.number().min(0).max(1);
const tokens = z.number().int().nonnegative();

/**
 * The knobs of a preset, flat, with their defaults: each built-in processor's options and the governor's settings
 * under the names the settings file and `CTXKIT_POLICY_*` variables use (`policy.maxTurns`, …). `preset()` turns
 * them into a pipeline (`presetPipelineOf`); nothing else reads them. A value of 0 (or `false`) leaves the
 * processor it configures out. Token thresholds scale down for small windows: each is capped by a share of the
 * usable window.
 */
export const presetOptionsSchema = z.object({
  /** Strip reasoning blocks from turns before the current one. */
  stripOlderReasoning: z.boolean().default(true),
  /** Replace images/files outside the current turn by a short text placeholder. */
  placeholderOlderBinaries: z.boolean().default(true),
  /** Send a tool result's `compactSummary` instead of its content once it is outside the newest step. */
  useCompactSummaries: z.boolean().default(true),
  /** Truncate older tool results above this many tokens (head + tail kept). 0 disables. */
  truncateToolResultsAbove: tokens.default(4_000),
  /** Share of a truncated result kept from its head (the rest from its tail). */
  truncationHeadShare: fraction.default(0.2),
  /**
   * Tool-output tokens, newest first, kept verbatim beyond the newest step (which is always kept): never
   * offloaded, truncated or summarised. Capped at 25% of the usable window. Small, because recency is a blunt
   * proxy for use: what the agent is likely to use next stays by `groundingTarget`, an offloaded output keeps a
   * preview of the lines agents act on and stays recallable.
   */
  offloadProtectTokens: tokens.default(1_000),
  /**
   * Offload only when at least this many tool tokens are prunable; settled history is considered once this many
   * tokens came after the protection window since the newest summary. 0 disables offloading.
   */
  offloadMinPrunableTokens: tokens.default(3_000),
  /** Lines of head and tail kept in an offloaded output's preview. */
  offloadPreviewLines: z.number().int().positive().default(5),
  /**
   * Shorten string arguments of older edit and write calls above this many tokens (a written file's content, an
   * edit's old and new text) to a preview, outside the same protection window as offloading. Other calls'
   * arguments stay verbatim. 0 disables.
   */
  elideToolInputsAbove: tokens.default(250),
  /**
   * The share of what the agent uses next that governance keeps in view. A tool output, or the text of the agent's
   * own edits and writes, stays verbatim (out of offloading, elision, truncation and summaries) while the measured
   * chance that the next reply uses it is at least `1 − groundingTarget`, or while keeping it costs less than that
   * chance of getting it back (see `neededContext`, and the measured rates in `reuse-rates.ts`). 0 disables.
   */
  groundingTarget: fraction.default(0.9995),
  /**
   * Your agent's own reuse rates for `groundingTarget`, by kind of context (`read`, `search`, `edit`, `shell`,
   * `other`, `written`): for each, the chance that the next reply uses such a piece at ages 0, 1, 2, 3–4, 5–7,
   * 8–12, 13–20, 21–33, 34–54 and 55+ requests, not rising with age. Kinds left out keep the measured defaults
   * (`DEFAULT_REUSE_RATES`).
   */
  reuseRates: reuseRatesSchema.optional(),
  /**
   * How far the reuse rates are trusted against what the session's own agent does: per kind and age bucket, they
   * weigh as much as this many of the session's own piece-replies (replies a piece was in the history for), so a
   * session's own reuse takes over as it accumulates. Default: measured (how much the bench's sessions differ,
   * `DEFAULT_REUSE_RATES_WEIGHT`); a very large value keeps the rates fixed.
   */
  reuseRatesWeight: z.number().positive().default(DEFAULT_REUSE_RATES_WEIGHT),
  /** Trim the oldest half of complete turns above this many turns. 0 disables. */
  maxTurns: tokens.default(0),
  /**
   * Summarise settled history — everything before the protected tail that is not still needed — as soon as
   * the prompt-cache arithmetic says it pays, long before the compaction trigger. Off by default: on the real
   * sessions of the bench, with summaries billed as LLM calls, it cost more than it saved (docs/policy.md).
   */
  compactSettledHistory: z.boolean().default(false),
  /** Compact when the payload passes this share of the usable window. 0 disables compaction. */
  compactionTrigger: fraction.default(0.9),
  /**
   * Also compact when the history passes this many messages, whatever their tokens (the co-cli seed's
   * `max_history_messages`); the recent `minTailTurns` turns stay. 0 disables this trigger.
   */
  compactAboveMessages: tokens.default(0),
  /** Recent whole user turns that compaction at the trigger keeps verbatim: at least this share of the window… */
  tailShare: fraction.default(0.25),
  /**
   * Share of the usable window the view may fill while keeping every piece the agent may still need verbatim: below
   * it nothing `groundingTarget` keeps is let go; above it those pieces share `tailShare` of the window, most likely
   * first. 0 keeps them to `tailShare` alone.
   */
  neededShare: fraction.default(0.4),
  /**
   * …and at least this many turns, when they fit. Settled-history compaction keeps the dialogue of as many turns
   * before the current one (each one's user message and final reply, when small).
   */
  minTailTurns: z.number().int().nonnegative().default(2),
  /** Largest summary, in tokens (also capped at 10% of the usable window). */
  summaryMaxTokens: tokens.default(6_000),
  /** A rolled-back compaction is retried only after the history grew by this share of the usable window. */
  inflationRetryShare: fraction.default(0.1),
  /** Histories with fewer turns than this fall back to keeping each turn's first user text and final reply. */
  smallHistoryTurns: z.number().int().nonnegative().default(5),
  /** Refuse (ContextOverflowError) a request known to overflow after governance. */
  preflight: z.boolean().default(true),
  /** Add a wrap-up notice when the payload still passes this share of the usable window. 0 disables. */
  budgetExitShare: fraction.default(0.9),
  /** A single tool result may never exceed this share of the usable window, even in the newest step. */
  toolResultCapShare: fraction.default(0.5),
  /** Loop detection: identical consecutive tool calls that count as a loop. 0 disables. */
  loopRepeatThreshold: tokens.default(5),
  /** Loop detection: a cycle of 2–5 calls repeated this many times counts as a loop. 0 disables. */
  loopCycleRepeats: tokens.default(5),
  /** Take optional checkpoints (truncation/offload batches) only when the prompt-cache arithmetic pays. */
  cacheAware: z.boolean().default(true),
  /** Provider prices used by that arithmetic. */
  pricing: z.enum(["anthropic", "openai", "gemini", "none"]).default("anthropic"),
  /**
   * The TTL of the Anthropic breakpoints the requests carry (`toAnthropic({ cacheTtl })`): with `1h` the
   * arithmetic keeps entries alive for an hour and prices their writes at 2× instead of 1.25×. Set it to the TTL
   * you send.
   */
  cacheTtl: z.enum(["5m", "1h"]).default("5m"),
});

/** A preset's resolved knobs. */
export type PresetOptions = z.output<typeof presetOptionsSchema>;

/** A preset's knobs as a user writes them (overrides): every field optional. */
export type PresetOptionsInput = z.input<typeof presetOptionsSchema>;

/**
 * Fills in defaults and validates a preset's knobs; throws `ValidationError` naming the bad field.
 *
 * @example
 * const options = resolvePresetOptions({ compactionTrigger: 0.7, maxTurns: 30 });
 */
export function resolvePresetOptions(input: PresetOptionsInput = {}): PresetOptions {
  return validate(presetOptionsSchema, input, "preset options");
}
