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

  it("is a usage error (exit 2) when governance refuses every request", async () => {
    const outcome = await runCliChild(["replay", short, "--window", "10"], { home });
    expect(outcome.code).toBe(2);
    expect(outcome.stdout).toBe("");
    expect(outcome.stderr).toMatch(
      /^ctxkit: --window 10 is too small for this conversation: governance refused every one of its 1 request; give a larger --window \(or leave it out for \S+'s [\d,]+\)\n$/,
    );
  });

  it("claims no saving when some requests were refused", async () => {
    const outcome = await runCliChild(["replay", spotter, "--window", "3000"], { home });
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
