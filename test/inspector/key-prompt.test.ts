import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { commands } from "../../src/cli/commands/index.ts";
import { createProgram } from "../../src/cli/program.ts";
import { KEY_REQUIRED_PROMPT } from "../../web/src/key-prompt.ts";
import { MemoryKeyStore } from "../../src/server/auth/memory-key-store.ts";
import { createServer } from "../../src/server/create-server.ts";
import { MemorySessionStore } from "../../src/store/memory/index.ts";

const io = { stdout: process.stdout, stderr: process.stderr, env: {} };

/**
 * The `ctxkit …` command a text names, checked against the CLI's real command tree: every word a subcommand,
 * every `<argument>` one the command takes (same count, same names), every `--option` one it has.
 */
function checkCommand(text: string): string {
  const named = /\bctxkit((?: [a-z][a-z-]*)+)((?: (?:<[a-z-]+>|--[a-z-]+))*)/.exec(text);
  expect(named, text).not.toBeNull();
  let command: Command = createProgram(commands, io);
  for (const word of named![1]!.trim().split(" ")) {
    const next = command.commands.find((candidate) => candidate.name() === word);
    expect(next, `"${word}" is not a subcommand of "${command.name()}" in: ${text}`).toBeDefined();
    command = next!;
  }
  const rest = named![2]!
    .trim()
    .split(" ")
    .filter((part) => part !== "");
  const argumentsNamed = rest.filter((part) => part.startsWith("<")).map((part) => part.slice(1, -1));
  expect(argumentsNamed).toEqual(command.registeredArguments.map((argument) => argument.name()));
  for (const option of rest.filter((part) => part.startsWith("--"))) {
    expect(command.options.map((candidate) => candidate.long)).toContain(option);
  }
  expect(command.commands, `${named![0]} needs a subcommand`).toEqual([]);
  return named![0];
}

describe("texts that tell the user to create a key name a command the CLI really has", () => {
  it("the inspector's key prompt", () => {
    expect(checkCommand(KEY_REQUIRED_PROMPT)).toBe("ctxkit serve keys add <tenant>");
  });

  it("the server's 401 answers", async () => {
    const app = createServer({ store: new MemorySessionStore(), keys: new MemoryKeyStore(), webRoot: false });
    for (const key of [undefined, `ctxk_0123456789ab_${"A".repeat(43)}`]) {
      const answer = await app.request("/v1/me", {
        headers: key === undefined ? {} : { authorization: `Bearer ${key}` },
      });
      expect(answer.status).toBe(401);
      const { error } = (await answer.json()) as { error: { message: string } };
      checkCommand(error.message);
    }
  });

  it("the check refuses a command the CLI does not have", () => {
    expect(() => checkCommand("create one with ctxkit serve --create-key <tenant>")).toThrow();
    expect(() => checkCommand("create one with ctxkit serve keys make <tenant>")).toThrow();
    expect(() => checkCommand("create one with ctxkit serve keys add <tenant> <label>")).toThrow();
  });
});
