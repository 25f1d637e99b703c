import { readFileSync } from "node:fs";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { CtxkitError, type CtxkitErrorCode } from "../errors/ctxkit-error.ts";
import { EXIT_CODE_MEANINGS, exitCodeFor } from "./exit-codes.ts";
import { runCli } from "./main.ts";

const ERROR_CODES: readonly CtxkitErrorCode[] = [
  "invalid_input",
  "parse_error",
  "unknown_format",
  "not_found",
  "context_overflow",
  "concurrent_write",
  "store_error",
  "schema_too_new",
  "corrupt_store",
  "file_access",
  "loop_detected",
  "summarizer_failed",
  "interrupted",
  "provider_error",
  "rate_limited",
  "auth_error",
  "timeout",
  "network_error",
  "config_error",
  "cli_model_error",
  "unsupported",
  "missing_dependency",
];

async function help(argv: readonly string[]): Promise<string> {
  let text = "";
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  expect(await runCli(argv, { stdout: stream, stderr: stream, env: {} })).toBe(0);
  return text;
}

describe("exit codes", () => {
  it("explain every code the CLI can exit with", () => {
    const explained = new Set(EXIT_CODE_MEANINGS.map(([code]) => code));
    const used = new Set([
      0,
      exitCodeFor(new Error("plain")),
      ...ERROR_CODES.map((code) => exitCodeFor(new CtxkitError(code, "x"))),
    ]);
    expect([...used].sort()).toEqual([...explained].sort());
  });

  it("are listed by --help, for the program and for every command", async () => {
    for (const argv of [["--help"], ["demo", "--help"], ["serve", "keys", "add", "--help"]]) {
      const text = await help(argv);
      expect(text).toContain("\nExit codes:\n");
      for (const [code, meaning] of EXIT_CODE_MEANINGS) {
        expect(text.replaceAll(/\n {5}/g, " ")).toContain(`\n  ${code}  ${meaning}\n`);
      }
    }
  });

  it("are the README's table", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    const rows = [...readme.matchAll(/^\| (\d) +\| (.+?) +\|$/gm)].map((row) => [Number(row[1]), row[2]]);
    expect(rows).toEqual(EXIT_CODE_MEANINGS.map(([code, meaning]) => [code, meaning]));
  });
});
