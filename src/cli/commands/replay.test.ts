// `ctxkit replay --dump <folder>` where the folder cannot be made or written: one line, exit 2, at once
// (issue 15: it spun at 90% CPU forever — Node's recursive mkdir loops where a folder cannot be created).
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCliChild } from "../../../test/support/run-cli-child.ts";
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
