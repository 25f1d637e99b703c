import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../errors/errors.ts";
import {
  activeCalibration,
  calibratedTokens,
  initialCalibration,
  learnFromGrowth,
  learnFromWhole,
  restoreCalibration,
  type CalibrationState,
} from "./calibration.ts";

function feed(state: CalibrationState, count: number, estimated: number, reported: number, messages = 2) {
  for (let sample = 0; sample < count; sample++)
    state = learnFromGrowth(state, { estimated, reported, messages });
  return state;
}

describe("calibration", () => {
  it("starts neutral", () => {
    expect(initialCalibration()).toMatchObject({
      factor: 1,
      messageOverhead: 0,
      hiddenTokens: 0,
      growthSamples: 0,
    });
    expect(activeCalibration(initialCalibration())).toEqual({ factor: 1, messageOverhead: 0 });
  });

  it("learns the text ratio from large growth, weighting larger samples more", () => {
    const small = learnFromGrowth(initialCalibration(), { estimated: 1_000, reported: 1_200, messages: 2 });
    const large = learnFromGrowth(initialCalibration(), { estimated: 20_000, reported: 24_000, messages: 2 });
    expect(small.factor).toBeGreaterThan(1);
    expect(large.factor).toBeGreaterThan(small.factor);
    expect(feed(initialCalibration(), 100, 5_000, 6_000).factor).toBeCloseTo(1.2, 2);
  });

  it("learns a per-message overhead from small growth, without touching the factor", () => {
    const state = feed(initialCalibration(), 200, 200, 300, 2);
    expect(state.factor).toBe(1);
    expect(state.messageOverhead).toBeCloseTo(50, 0);
    expect(calibratedTokens(state, 200, 2)).toBeCloseTo(300, -1);
  });

  it("applies what it learnt only while that predicts better than the profile alone", () => {
    const learnt = feed(initialCalibration(), 50, 3_000, 3_600);
    expect(learnt.calibratedError).toBeLessThan(learnt.uncalibratedError);
    expect(activeCalibration(learnt).factor).toBeGreaterThan(1.1);
    // Growth that the profile already predicts: learning adds nothing, so the neutral calibration stays.
    const accurate = feed(initialCalibration(), 50, 3_000, 3_000);
    expect(activeCalibration(accurate)).toEqual({ factor: 1, messageOverhead: 0 });
  });

  it("ignores implausible growth (hidden injected text, shrinking prompts)", () => {
    const state = initialCalibration();
    expect(learnFromGrowth(state, { estimated: 100, reported: 4_000, messages: 1 })).toBe(state);
    expect(learnFromGrowth(state, { estimated: 1_000, reported: -50, messages: 1 })).toBe(state);
    expect(learnFromGrowth(state, { estimated: 0, reported: 10, messages: 1 })).toBe(state);
  });

  it("keeps the factor and the overhead inside their bounds whatever it is fed (property)", () => {
    const sample = fc.record({
      estimated: fc.integer({ min: -1_000, max: 100_000 }),
      reported: fc.integer({ min: -1_000, max: 100_000 }),
      messages: fc.integer({ min: 0, max: 20 }),
    });
    fc.assert(
      fc.property(fc.array(sample), (samples) => {
        let state = initialCalibration();
        for (const growth of samples) state = learnFromGrowth(state, growth);
        expect(state.factor).toBeGreaterThanOrEqual(0.5);
        expect(state.factor).toBeLessThanOrEqual(2.5);
        expect(Math.abs(state.messageOverhead)).toBeLessThanOrEqual(150);
      }),
    );
  });

  it("learns the tokens the estimate never sees from whole payloads", () => {
    let state = learnFromWhole(initialCalibration(), { estimated: 10_000, reported: 25_000, messages: 10 });
    expect(state.hiddenTokens).toBe(15_000);
    state = learnFromWhole(state, { estimated: 20_000, reported: 35_000, messages: 20 });
    expect(state.hiddenTokens).toBe(15_000);
    state = learnFromWhole(state, { estimated: 20_000, reported: 45_000, messages: 20 });
    expect(state.hiddenTokens).toBeGreaterThan(15_000);
    expect(state.hiddenTokens).toBeLessThan(25_000);
  });

  it("round-trips through JSON and rejects damaged state", () => {
    const state = learnFromWhole(feed(initialCalibration(), 3, 2_000, 2_300), {
      estimated: 5_000,
      reported: 9_000,
      messages: 4,
    });
    expect(restoreCalibration(JSON.parse(JSON.stringify(state)))).toEqual(state);
    expect(() => restoreCalibration({ ...state, factor: -1 })).toThrow(ValidationError);
    expect(() => restoreCalibration({ version: 2 })).toThrow(/calibration state/);
  });
});
