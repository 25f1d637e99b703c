import { z } from "zod";
import { validate } from "../model/schemas.ts";

/**
 * What ctxkit has learnt about one model's real token counts versus its estimates. Plain JSON: persist it
 * per model (and per application, since `hiddenTokens` depends on the system prompt and tools) and pass it
 * back to the next `AnchoredTokenAccount`.
 */
export interface CalibrationState {
  readonly version: 1;
  /** Multiplier for estimates: reported ÷ estimated growth between consecutive requests. */
  readonly factor: number;
  /** Exponentially decayed sums of reported and estimated growth; `factor` is their ratio. */
  readonly reportedSum: number;
  readonly estimatedSum: number;
  /** Prompt tokens the provider counts that no estimate sees (its own framing, unseen system text). */
  readonly hiddenTokens: number;
  readonly growthSamples: number;
  readonly wholeSamples: number;
}

/** Tuning of the calibration. */
export interface CalibrationOptions {
  /** Weight kept by past growth per new sample (0.9: roughly the last 10 requests matter). */
  decay?: number;
  /** Estimated tokens of "ratio 1" evidence the factor starts with, so a small first sample cannot swing it. */
  priorTokens?: number;
  /** Growth whose reported ÷ estimated ratio falls outside this band is not evidence about the tokenizer. */
  plausibleRatio?: readonly [number, number];
  /** Bounds of `factor`. */
  factorRange?: readonly [number, number];
  /** Weight of a new sample of `hiddenTokens`. */
  hiddenRate?: number;
}

const DEFAULTS = {
  decay: 0.9,
  priorTokens: 2_000,
  plausibleRatio: [0.4, 2.5],
  factorRange: [0.5, 2.5],
  hiddenRate: 0.3,
} as const;

/**
 * A calibration that has learnt nothing yet (factor 1, nothing hidden).
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
    hiddenTokens: 0,
    growthSamples: 0,
    wholeSamples: 0,
  });
}

function clamp(value: number, [low, high]: readonly [number, number]): number {
  return Math.min(high, Math.max(low, value));
}

/**
 * Learns from the growth between two requests whose payloads share a prefix: the provider counted
 * `reportedGrowth` more tokens where the estimate saw `estimatedGrowth` more. Implausible ratios (hidden
 * injected text, provider-side changes) are ignored.
 *
 * @example
 * learnFromGrowth(initialCalibration(), 1_000, 1_150).factor; // ≈ 1.05, moving towards 1.15
 */
export function learnFromGrowth(
  state: CalibrationState,
  estimatedGrowth: number,
  reportedGrowth: number,
  options: CalibrationOptions = {},
): CalibrationState {
  if (!(estimatedGrowth > 0) || !(reportedGrowth > 0)) return state;
  const ratio = reportedGrowth / estimatedGrowth;
  const [low, high] = options.plausibleRatio ?? DEFAULTS.plausibleRatio;
  if (ratio < low || ratio > high) return state;
  const decay = options.decay ?? DEFAULTS.decay;
  const reportedSum = state.reportedSum * decay + reportedGrowth;
  const estimatedSum = state.estimatedSum * decay + estimatedGrowth;
  return Object.freeze({
    ...state,
    reportedSum,
    estimatedSum,
    factor: clamp(reportedSum / estimatedSum, options.factorRange ?? DEFAULTS.factorRange),
    growthSamples: state.growthSamples + 1,
  });
}

/**
 * Learns the hidden tokens from a whole payload: the provider reported `reportedTotal` where the estimate,
 * scaled by the current factor, saw `factor × estimatedTotal`.
 *
 * @example
 * learnFromWhole(initialCalibration(), 10_000, 25_000).hiddenTokens; // 15000 (first sample taken as is)
 */
export function learnFromWhole(
  state: CalibrationState,
  estimatedTotal: number,
  reportedTotal: number,
  options: CalibrationOptions = {},
): CalibrationState {
  if (!(reportedTotal > 0)) return state;
  const sample = reportedTotal - state.factor * estimatedTotal;
  const rate = state.wholeSamples === 0 ? 1 : (options.hiddenRate ?? DEFAULTS.hiddenRate);
  return Object.freeze({
    ...state,
    hiddenTokens: state.hiddenTokens + rate * (sample - state.hiddenTokens),
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
  hiddenTokens: finite,
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
