import { z } from "zod";
import { validate } from "../model/schemas.ts";
import { cacheProfiles, type CacheProfile } from "../pricing/cache-profile.ts";
import { DEFAULT_REUSE_RATES_WEIGHT, REUSE_AGE_LIMITS } from "./reuse-rates.ts";

const fraction = z.number().min(0).max(1);
const tokens = z.number().int().nonnegative();

/** One kind's reuse rates: a chance per age bucket, not rising with age. */
const reuseRow = z
  .array(fraction)
  .length(REUSE_AGE_LIMITS.length, `give one rate per age bucket (${REUSE_AGE_LIMITS.length})`)
  .refine((rates) => rates.every((rate, bucket) => bucket === 0 || rate <= rates[bucket - 1]!), {
    message:
      "rates must not rise with age (governance lets a piece go once its chance falls): pool a bucket " +
      "with the younger one it exceeds",
  });

/** Reuse rates by kind of context; kinds left out keep the measured defaults. */
export const reuseRatesSchema = z
  .object({
    read: reuseRow.optional(),
    search: reuseRow.optional(),
    edit: reuseRow.optional(),
    shell: reuseRow.optional(),
    other: reuseRow.optional(),
    written: reuseRow.optional(),
  })
  .strict();

/**
 * The governor's own settings, with their defaults: what no single processor owns — the protection window and the
 * batch an optional checkpoint waits for, the share of what the agent uses next kept in view, pre-flight, the
 * budget notice, loop detection and the prompt-cache arithmetic. Processors read these through their context;
 * their own options go to their factories. Token thresholds are capped by shares of the usable window.
 */
export const governorSettingsSchema = z
  .object({
    /**
     * Tool-output tokens, newest first, kept verbatim beyond the newest step (which is always kept): never
     * offloaded, elided, truncated or summarised. Capped at 25% of the usable window.
     */
    protectTokens: tokens.default(1_000),
    /**
     * Tokens of tool traffic (or of settled history, for settled-history compaction) that must pile up after the
     * protection window before an optional checkpoint is considered again once one was not taken. Capped at 10%
     * of the usable window.
     */
    batchTokens: tokens.default(3_000),
    /**
     * The share of what the agent uses next that governance keeps in view: a piece stays verbatim while the
     * measured chance the next reply uses it is at least `1 − groundingTarget` (see `neededContext`). 0 disables.
     */
    groundingTarget: fraction.default(0.9995),
    /**
     * Your agent's own reuse rates for `groundingTarget`, by kind (`read`, `search`, `edit`, `shell`, `other`,
     * `written`): the chance the next reply uses a piece at ages 0, 1, 2, 3–4, 5–7, 8–12, 13–20, 21–33, 34–54 and
     * 55+ requests, not rising with age. Kinds left out keep `DEFAULT_REUSE_RATES`.
     */
    reuseRates: reuseRatesSchema.optional(),
    /** How many of the session's own piece-replies the reuse rates weigh as (see `DEFAULT_REUSE_RATES_WEIGHT`). */
    reuseRatesWeight: z.number().positive().default(DEFAULT_REUSE_RATES_WEIGHT),
    /** Share of the usable window the recent turns `neededContext` keeps verbatim may take. */
    tailShare: fraction.default(0.25),
    /**
     * Share of the usable window the view may fill while keeping every piece the agent may still need verbatim
     * (see `neededContext`): below it nothing needed is let go; above it, the needed pieces share `tailShare` of the
     * window, most likely first. 0 keeps them to `tailShare` alone.
     */
    neededShare: fraction.default(0.4),
    /** Share of a result the governor's own cuts (pre-flight, emergency) keep from its head. */
    truncationHeadShare: fraction.default(0.2),
    /** Refuse (ContextOverflowError) a request known to overflow after governance. */
    preflight: z.boolean().default(true),
    /** Add a wrap-up notice when the payload still passes this share of the usable window. 0 disables. */
    budgetExitShare: fraction.default(0.9),
    /** Loop detection: identical consecutive tool calls that count as a loop. 0 disables. */
    loopRepeatThreshold: tokens.default(5),
    /** Loop detection: a cycle of 2–5 calls repeated this many times counts as a loop. 0 disables. */
    loopCycleRepeats: tokens.default(5),
    /** Take optional checkpoints only when the prompt-cache arithmetic says they pay. */
    cacheAware: z.boolean().default(true),
    /** Provider prices used by that arithmetic. */
    pricing: z.enum(["anthropic", "openai", "gemini", "none"]).default("anthropic"),
    /** The TTL of the Anthropic breakpoints the requests carry: with `1h`, writes cost 2× and entries live an hour. */
    cacheTtl: z.enum(["5m", "1h"]).default("5m"),
  })
  .strict();

/** The governor's resolved settings. */
export type GovernorSettings = z.output<typeof governorSettingsSchema>;

/** Governor settings as a user writes them: every field optional. */
export type GovernorSettingsInput = z.input<typeof governorSettingsSchema>;

/**
 * Fills in defaults and validates governor settings; throws `ValidationError` whose `issues` name each bad field.
 *
 * @example
 * const settings = resolveGovernorSettings({ pricing: "openai", budgetExitShare: 0 });
 */
export function resolveGovernorSettings(input: GovernorSettingsInput = {}): GovernorSettings {
  return validate(governorSettingsSchema, input, "governor settings");
}

/**
 * The prompt-cache prices and lifetimes governance weighs: the `pricing` provider's, with the long TTL's when
 * `cacheTtl` is `1h`.
 *
 * @example
 * governancePricing(resolveGovernorSettings({ cacheTtl: "1h" })).write; // 2 (Anthropic's 1-hour write)
 */
export function governancePricing(settings: Pick<GovernorSettings, "pricing" | "cacheTtl">): CacheProfile {
  const profile = cacheProfiles[settings.pricing];
  return settings.cacheTtl === "1h"
    ? { ...profile, ttlMs: profile.longTtlMs, write: profile.writeLong }
    : profile;
}
