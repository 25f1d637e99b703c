import { z } from "zod";
import { validate } from "../model/schemas.ts";

/**
 * What ctxkit has learnt about one model's real token counts versus its estimates. Plain JSON: persist it
 * per model (and per application, since `hiddenTokens` depends on the system prompt and tools) and pass it
 * back to the next `AnchoredTokenAccount`. A provider's count of new content is modelled as
 * `factor × estimate + messageOverhead × messages`: the factor corrects the text rates, the overhead the
 * framing the profile gets wrong (ids, delimiters, injected reminders).
 */
export interface CalibrationState {
  readonly version: 1;
  /** Multiplier for estimated text: reported ÷ estimated growth, learnt from large growth only. */
  readonly factor: number;
  /** Exponentially decayed sums of reported and estimated growth; `factor` is their ratio. */
  readonly reportedSum: number;
  readonly estimatedSum: number;
  /** Tokens per message the provider counts beyond `factor ×` the estimate (may be negative). */
  readonly messageOverhead: number;
  /** Prompt tokens the provider counts that no estimate sees (its own framing, unseen system text). */
  readonly hiddenTokens: number;
  /**
   * Running mean relative error of growth predictions without and with the learnt factor and overhead,
   * each measured before learning from the sample. The learnt values are used only while they predict
   * better, so calibration cannot make a well-fitted profile worse.
   */
  readonly uncalibratedError: number;
  readonly calibratedError: number;
  readonly growthSamples: number;
  readonly wholeSamples: number;
}

/** Growth between two requests: what the estimate saw added, what the provider reported, in how many messages. */
export interface GrowthSample {
  readonly estimated: number;
  readonly reported: number;
  readonly messages: number;
}

/** Tuning of the calibration. */
export interface CalibrationOptions {
  /** Weight kept by past growth per new sample (0.95: roughly the last 20 large samples matter). */
  decay?: number;
  /** Estimated tokens of "ratio 1" evidence the factor starts with, so one sample cannot swing it. */
  priorTokens?: number;
  /** Growth smaller than this is dominated by framing, not by the tokenizer: it teaches the overhead only. */
  factorMinimumTokens?: number;
  /** Growth whose reported ÷ estimated ratio falls outside this band is not evidence (hidden injected text). */
  plausibleRatio?: readonly [number, number];
  /** Bounds of `factor`. */
  factorRange?: readonly [number, number];
  /** Weight of a new sample of `messageOverhead`, and the bound of one sample's value. */
  overheadRate?: number;
  overheadLimit?: number;
  /** Weight of a new sample of `hiddenTokens`, and of the running prediction errors. */
  hiddenRate?: number;
  errorRate?: number;
}

const DEFAULTS = {
  decay: 0.95,
  priorTokens: 10_000,
  factorMinimumTokens: 1_000,
  plausibleRatio: [0.4, 2.5],
  factorRange: [0.5, 2.5],
  overheadRate: 0.05,
  overheadLimit: 150,
  hiddenRate: 0.3,
  errorRate: 0.1,
} as const;

/**
 * A calibration that has learnt nothing yet (factor 1, no overhead, nothing hidden).
 *
 * @example
 * const account = new AnchoredTokenAccount({ counter, calibration: initialCalibration() });
 */
export function initialCalibration(options: CalibrationOptions = {}): CalibrationState {
  const prior = options.priorTokens ?? DEFAULTS.priorTokens;
  return Object.freeze({
    version: 1,
    factor: 1,
    reportedSum: prior,
    estimatedSum: prior,
    messageOverhead: 0,
    hiddenTokens: 0,
    uncalibratedError: 0,
    calibratedError: 0,
    growthSamples: 0,
    wholeSamples: 0,
  });
}

function clamp(value: number, [low, high]: readonly [number, number]): number {
  return Math.min(high, Math.max(low, value));
}

/**
 * The factor and overhead to apply: the learnt ones while they have predicted growth better than the
 * profile alone, else neutral ones.
 *
 * @example
 * activeCalibration(initialCalibration()); // { factor: 1, messageOverhead: 0 }
 */
export function activeCalibration(state: CalibrationState): {
  readonly factor: number;
  readonly messageOverhead: number;
} {
  return state.calibratedError < state.uncalibratedError
    ? { factor: state.factor, messageOverhead: state.messageOverhead }
    : { factor: 1, messageOverhead: 0 };
}

/**
 * Calibrated tokens of content the estimator counted as `estimated` tokens in `messages` messages.
 *
 * @example
 * calibratedTokens({ factor: 1.1, messageOverhead: 5 }, 1_000, 2); // 1110
 */
export function calibratedTokens(
  calibration: { readonly factor: number; readonly messageOverhead: number },
  estimated: number,
  messages: number,
): number {
  return calibration.factor * estimated + calibration.messageOverhead * messages;
}

/**
 * Learns from the growth between two requests whose payloads share a prefix. Large growth teaches the
 * factor (ratio of decayed sums, so larger samples weigh more); every plausible sample then teaches the
 * per-message overhead from what the factor leaves unexplained. Implausible ratios are ignored.
 *
 * @example
 * learnFromGrowth(initialCalibration(), { estimated: 10_000, reported: 11_500, messages: 2 }).factor; // ≈ 1.07
 */
export function learnFromGrowth(
  state: CalibrationState,
  sample: GrowthSample,
  options: CalibrationOptions = {},
): CalibrationState {
  const { estimated, reported, messages } = sample;
  if (!(estimated > 0) || !(reported > 0) || !(messages > 0)) return state;
  const [low, high] = options.plausibleRatio ?? DEFAULTS.plausibleRatio;
  if (reported / estimated < low || reported / estimated > high) return state;
  const errorRate = options.errorRate ?? DEFAULTS.errorRate;
  const uncalibratedMiss = Math.abs(estimated - reported) / reported;
  const calibratedMiss = Math.abs(calibratedTokens(state, estimated, messages) - reported) / reported;
  let { factor, reportedSum, estimatedSum } = state;
  if (estimated >= (options.factorMinimumTokens ?? DEFAULTS.factorMinimumTokens)) {
    const decay = options.decay ?? DEFAULTS.decay;
    reportedSum = reportedSum * decay + reported;
    estimatedSum = estimatedSum * decay + estimated;
    factor = clamp(reportedSum / estimatedSum, options.factorRange ?? DEFAULTS.factorRange);
  }
  const limit = options.overheadLimit ?? DEFAULTS.overheadLimit;
  const overheadSample = clamp((reported - factor * estimated) / messages, [-limit, limit]);
  const rate = options.overheadRate ?? DEFAULTS.overheadRate;
  return Object.freeze({
    ...state,
    factor,
    reportedSum,
    estimatedSum,
    messageOverhead: state.messageOverhead + rate * (overheadSample - state.messageOverhead),
    uncalibratedError: state.uncalibratedError + errorRate * (uncalibratedMiss - state.uncalibratedError),
    calibratedError: state.calibratedError + errorRate * (calibratedMiss - state.calibratedError),
    growthSamples: state.growthSamples + 1,
  });
}

/**
 * Learns the hidden tokens from a whole payload of `messages` messages: the provider reported
 * `reportedTotal` where the calibrated estimate saw less (or more).
 *
 * @example
 * learnFromWhole(initialCalibration(), { estimated: 10_000, reported: 25_000, messages: 8 }).hiddenTokens; // 15000
 */
export function learnFromWhole(
  state: CalibrationState,
  sample: GrowthSample,
  options: CalibrationOptions = {},
): CalibrationState {
  if (!(sample.reported > 0)) return state;
  const hidden =
    sample.reported - calibratedTokens(activeCalibration(state), sample.estimated, sample.messages);
  const rate = state.wholeSamples === 0 ? 1 : (options.hiddenRate ?? DEFAULTS.hiddenRate);
  return Object.freeze({
    ...state,
    hiddenTokens: state.hiddenTokens + rate * (hidden - state.hiddenTokens),
    wholeSamples: state.wholeSamples + 1,
  });
}

const finite = z.number().refine(Number.isFinite, "must be a finite number");
const count = z.number().int().nonnegative();

/** Schema of a persisted `CalibrationState`. */
export const calibrationStateSchema = z.object({
  version: z.literal(1),
  factor: finite.positive(),
  reportedSum: finite.positive(),
  estimatedSum: finite.positive(),
  messageOverhead: finite,
  hiddenTokens: finite,
  uncalibratedError: finite.nonnegative(),
  calibratedError: finite.nonnegative(),
  growthSamples: count,
  wholeSamples: count,
});

/**
 * Reads a persisted calibration (e.g. `JSON.parse` of what was saved), throwing a `ValidationError` that
 * names each bad field when it is not one.
 *
 * @example
 * const calibration = restoreCalibration(JSON.parse(await readFile("calibration.json", "utf8")));
 */
export function restoreCalibration(value: unknown): CalibrationState {
  return Object.freeze(validate(calibrationStateSchema, value, "calibration state"));
}
