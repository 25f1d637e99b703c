import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../errors/errors.ts";
import { initialCalibration, learnFromGrowth, learnFromWhole, restoreCalibration } from "./calibration.ts";

describe("calibration", () => {
  it("starts neutral", () => {
    expect(initialCalibration()).toMatchObject({
      factor: 1,
      hiddenTokens: 0,
      growthSamples: 0,
      wholeSamples: 0,
    });
  });

  it("moves the factor towards the observed ratio, weighting large samples more", () => {
    const small = learnFromGrowth(initialCalibration(), 100, 120);
    const large = learnFromGrowth(initialCalibration(), 10_000, 12_000);
    expect(small.factor).toBeGreaterThan(1);
    expect(large.factor).toBeGreaterThan(small.factor);
    let state = initialCalibration();
    for (let request = 0; request < 40; request++) state = learnFromGrowth(state, 2_000, 2_400);
    expect(state.factor).toBeCloseTo(1.2, 2);
    expect(state.growthSamples).toBe(40);
  });

  it("ignores implausible growth (hidden injected text, shrinking prompts)", () => {
    const state = initialCalibration();
    expect(learnFromGrowth(state, 100, 4_000)).toBe(state);
    expect(learnFromGrowth(state, 1_000, -50)).toBe(state);
    expect(learnFromGrowth(state, 0, 10)).toBe(state);
  });

  it("keeps the factor inside its range whatever it is fed (property)", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.integer({ min: -1_000, max: 100_000 }), fc.integer({ min: -1_000, max: 100_000 })),
        ),
        (samples) => {
          let state = initialCalibration();
          for (const [estimated, reported] of samples) state = learnFromGrowth(state, estimated, reported);
          expect(state.factor).toBeGreaterThanOrEqual(0.5);
          expect(state.factor).toBeLessThanOrEqual(2.5);
        },
      ),
    );
  });

  it("learns the tokens the estimate never sees from whole payloads", () => {
    let state = learnFromWhole(initialCalibration(), 10_000, 25_000);
    expect(state.hiddenTokens).toBe(15_000);
    state = learnFromWhole(state, 20_000, 35_000);
    expect(state.hiddenTokens).toBe(15_000);
    state = learnFromWhole(state, 20_000, 45_000);
    expect(state.hiddenTokens).toBeGreaterThan(15_000);
    expect(state.hiddenTokens).toBeLessThan(25_000);
  });

  it("round-trips through JSON and rejects damaged state", () => {
    const state = learnFromWhole(learnFromGrowth(initialCalibration(), 1_000, 1_100), 5_000, 9_000);
    expect(restoreCalibration(JSON.parse(JSON.stringify(state)))).toEqual(state);
    expect(() => restoreCalibration({ ...state, factor: -1 })).toThrow(ValidationError);
    expect(() => restoreCalibration({ version: 2 })).toThrow(/calibration state/);
  });
});
