// `ctxkit replay --dump <folder>` where the folder cannot be made or written: one line, exit 2, at once
// (issue 15: it spun at 90% CPU forever — Node's recursive mkdir loops where a folder cannot be created).
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCliChild } from "../../../test/support/run-cli-child.ts";
import { preset } from "../../governance/presets.ts";
import { replayPipeline } from "./run-replay.ts";
import { transcriptPath } from "../../../test/support/transcripts.ts";

const home = mkdtempSync(join(tmpdir(), "ctxkit-replay-dump-"));
chmodSync(home, 0o755);
afterAll(() => rmSync(home, { recursive: true, force: true }));
const short = transcriptPath("claude-code__marot-spotter/short.jsonl");

describe("ctxkit replay --dump to a place it cannot write", () => {
  it("fails at once with one actionable line and exit 2", async () => {
    const file = join(home, "a-file");
    writeFileSync(file, "not a folder\n");
    const locked = join(home, "locked");
    mkdirSync(locked, { mode: 0o555 });
    chmodSync(locked, 0o555);
    const cases: [string, RegExp][] = [
      [
        "/proc/ctxkit-no-such-dump",
        /^ctxkit: \/proc\/ctxkit-no-such-dump: cannot create the folder here; choose another path\n$/,
      ],
      [file, /^ctxkit: .*a-file: is a file, not a folder; choose another path\n$/],
      [locked, /^ctxkit: .*locked\/request-0\.json: cannot write the request dump: permission denied; .+\n$/],
    ];
    const outcomes = await Promise.all(
      cases.map(([dump]) => runCliChild(["replay", short, "--json", "--dump", dump], { home })),
    );
    for (const [index, outcome] of outcomes.entries()) {
      expect(outcome.killed, cases[index]![0]).toBe(false);
      expect(outcome.stderr).toMatch(cases[index]![1]);
      expect(outcome.code).toBe(2);
    }
  });
});

describe("ctxkit replay --explain", () => {
  it("prints the grounding and lists the spans missing from the worst-grounded requests", async () => {
    const spotter = transcriptPath("claude-code__marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl");
    const outcome = await runCliChild(["replay", spotter, "--window", "48000", "--explain", "2"], { home });
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toMatch(
      /Next-step grounding \d+\.\d% \(edit anchors \d+\.\d%; worst request \d+ at \d+\.\d%\)/,
    );
    expect(outcome.stdout).toMatch(/priced by the anthropic prompt cache \(claude-opus-4-6/);
    const explained = outcome.stdout.match(/^request \d+: grounding \d+\.\d%, missing:$/gm) ?? [];
    expect(explained).toHaveLength(2);
    expect(outcome.stdout).toMatch(/^ {2}- (anchor|identifier|path|literal): \S/m);
  });
});

describe("ctxkit replay with a window too small", () => {
  const spotter = transcriptPath("claude-code__marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl");

  it("is a usage error (exit 2) naming the recorded system prompt and tools when the window cannot hold them", async () => {
    for (const [file, window] of [
      [short, "10"],
      [spotter, "3000"],
    ] as const) {
      const outcome = await runCliChild(["replay", file, "--window", window], { home });
      expect(outcome.code).toBe(2);
      expect(outcome.stdout).toBe("");
      const [, fixed, reserved, above] =
        /^ctxkit: --window [\d,]+ cannot hold this conversation's system prompt and tools \(([\d,]+) tokens, recorded\) with ([\d,]+) tokens kept for the reply: give a --window above ([\d,]+) \(or leave it out for \S+'s [\d,]+\)\n$/.exec(
          outcome.stderr,
        ) ?? [];
      const figure = (text?: string) => Number(text?.replaceAll(",", ""));
      expect(figure(fixed)).toBeGreaterThan(20_000);
      expect(figure(above)).toBe(figure(fixed) + figure(reserved));
    }
  });

  it("says how much more ctxkit costs when it costs more (no negative saving)", async () => {
    const gemini = transcriptPath("codemie-code/gemini-cli/session-2025-12-01T21-45-5b959dae.json");
    const outcome = await runCliChild(["replay", gemini, "--window", "20000"], { home });
    expect(outcome.code).toBe(0);
    const [, raw, governed] = /^cost units \S.*?\s([\d,]+)\s+([\d,]+)\s/m.exec(outcome.stdout) ?? [];
    const [rawUnits, governedUnits] = [raw, governed].map((text) => Number(text?.replaceAll(",", "")));
    expect(governedUnits).toBeGreaterThan(rawUnits!);
    const above = (governedUnits! / rawUnits! - 1) * 100;
    expect(outcome.stdout).toContain(`(${above.toFixed(1)}% above no governance)`);
    expect(outcome.stdout).not.toMatch(/-\d+\.\d% below/);
  });

  it("right-aligns the recorded agent's column", async () => {
    const outcome = await runCliChild(["replay", spotter, "--window", "48000"], { home });
    const lines = outcome.stdout.split("\n");
    const header = lines.find((line) => line.includes("recorded agent"))!;
    const input = lines.find((line) => line.startsWith("input tokens"))!;
    expect(input.length).toBe(header.length);
    expect(input).toMatch(/\d$/);
  });

  it("claims no saving when some requests were refused", async () => {
    const outcome = await runCliChild(["replay", spotter, "--window", "40000"], { home });
    expect(outcome.code).toBe(0);
    const refused = Number(/, (\d+) refused\./.exec(outcome.stdout)?.[1]);
    expect(refused).toBeGreaterThan(0);
    expect(outcome.stdout).not.toMatch(/below no governance/);
    expect(outcome.stdout).toMatch(
      new RegExp(
        `\\(no saving claimed: ${refused} of \\d+ requests did not fit the window and were refused, `,
      ),
    );
    const fits = await runCliChild(["replay", spotter, "--window", "48000"], { home });
    expect(fits.stdout).toMatch(/, 0 refused\./);
    expect(fits.stdout).toMatch(/\(\d+\.\d% below no governance\)/);
  });
});

describe("replayPipeline", () => {
  it("puts the flags' pricing and cache TTL over a preset that filled in every default", () => {
    const aggressive = preset("aggressive");
    expect(aggressive.settings.pricing).toBe("anthropic");
    const pipeline = replayPipeline(aggressive, "openai", "1h");
    expect(pipeline.settings).toMatchObject({
      pricing: "openai",
      cacheTtl: "1h",
      groundingTarget: aggressive.settings.groundingTarget,
    });
    expect(pipeline.processors).toEqual(aggressive.processors);
  });
});
