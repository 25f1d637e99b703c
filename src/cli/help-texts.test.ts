import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { commands } from "./commands/index.ts";
import { createProgram } from "./program.ts";

/** Words a help text may start with in capitals: names and acronyms. */
const PROPER =
  /^(Anthropic|OpenAI|PostgreSQL|SQLite|JSON|HTTP|Claude|Codex|Gemini|SWE-agent|CTXKIT_\w+|[A-Z]{2,}\b)/;

function* helpTexts(command: Command, path: string): Generator<[string, string]> {
  yield [path, command.description()];
  for (const option of command.options) yield [`${path} ${option.flags}`, option.description];
  for (const sub of command.commands) yield* helpTexts(sub, `${path} ${sub.name()}`);
}

describe("help texts", () => {
  it("start in lower case, as commander's own ('display help for command'), unless they start with a name", () => {
    const program = createProgram(commands, { stdout: process.stdout, stderr: process.stderr, env: {} });
    const texts = [...helpTexts(program, "ctxkit")];
    expect(texts.length).toBeGreaterThan(50);
    const capitalised = texts.filter(([, text]) => /^[A-Z]/.test(text) && !PROPER.test(text));
    expect(capitalised).toEqual([]);
  });
});
