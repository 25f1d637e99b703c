// Calibration of the prompt-cache model on recorded Claude Code sessions (bench/support/cache-calibration.ts):
// re-pricing what Claude Code sent, with its own breakpoints and TTL, reproduces what Anthropic billed.
import { describe, expect, it } from "vitest";
import { calibrateCache, type CacheCalibration } from "../../bench/support/cache-calibration.ts";
import { importTranscriptFile } from "../../src/formats/transcripts/index.ts";
import { transcriptFiles, transcriptName } from "../support/transcripts.ts";

const error = (modelled: number, recorded: number) => (recorded === 0 ? 0 : modelled / recorded - 1);

async function calibrations(): Promise<{ name: string; calibration: CacheCalibration }[]> {
  const found: { name: string; calibration: CacheCalibration }[] = [];
  for (const file of transcriptFiles.filter((path) => /claude-code/.test(path))) {
    for (const conversation of await importTranscriptFile(file)) {
      if (conversation.sidechain === true) continue;
      const calibration = calibrateCache(conversation);
      if (calibration !== undefined) found.push({ name: transcriptName(file), calibration });
    }
  }
  return found;
}

describe("prompt-cache calibration on recorded Claude Code sessions", () => {
  it("reproduces the billed cache reads and writes within 10% where the transcript shows everything that was sent", async () => {
    const all = await calibrations();
    const clean = all.filter(
      ({ calibration }) => calibration.clientRewrites === 0 && calibration.requests >= 5,
    );
    expect(clean.length).toBeGreaterThanOrEqual(3);
    for (const { name, calibration } of clean) {
      expect(
        Math.abs(error(calibration.modelled.read, calibration.recorded.read)),
        `${name} reads`,
      ).toBeLessThanOrEqual(0.1);
      expect(
        Math.abs(error(calibration.modelled.write, calibration.recorded.write)),
        `${name} writes`,
      ).toBeLessThanOrEqual(0.1);
    }
  });

  it("reproduces the reads of sessions where the client rarely rewrote its prefix, and never invents reads there", async () => {
    const all = await calibrations();
    const mostlyClean = all.filter(
      ({ calibration }) =>
        calibration.requests >= 10 && calibration.clientRewrites <= 0.1 * calibration.requests,
    );
    expect(mostlyClean.length).toBeGreaterThanOrEqual(5);
    for (const { name, calibration } of mostlyClean)
      expect(
        Math.abs(error(calibration.modelled.read, calibration.recorded.read)),
        `${name} reads`,
      ).toBeLessThanOrEqual(0.1);
  });
});
