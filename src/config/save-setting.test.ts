import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError } from "../errors/errors.ts";
import { SettingsFileError } from "../errors/settings-file-error.ts";
import { loadSettings } from "./load-settings.ts";
import { removeSetting, saveSetting } from "./save-setting.ts";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function sandbox() {
  const root = mkdtempSync(join(tmpdir(), "ctxkit-save-"));
  roots.push(root);
  const home = join(root, "home");
  const repo = join(root, "repo");
  const cwd = join(repo, "src");
  mkdirSync(join(repo, ".git"), { recursive: true });
  mkdirSync(cwd, { recursive: true });
  mkdirSync(home, { recursive: true });
  return { home, repo, cwd, env: {}, projectFile: join(repo, ".ctxkit", "settings.json") };
}

const readJson = (file: string): unknown => JSON.parse(readFileSync(file, "utf8"));

function thrown(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected an error");
}

describe("saveSetting", () => {
  it("creates the project file at the repository root and loadSettings reads it back", () => {
    const options = sandbox();
    const saved = saveSetting("project", "policy.maxTurns", 30, options);
    expect(saved.file).toBe(options.projectFile);
    expect(readJson(options.projectFile)).toEqual({ policy: { maxTurns: 30 } });
    const loaded = loadSettings(options);
    expect(loaded.settings.policy).toEqual({ maxTurns: 30 });
    expect(loaded.sources["policy.maxTurns"]).toEqual({ kind: "project", file: options.projectFile });
  });

  it("keeps the other keys of the file", () => {
    const options = sandbox();
    mkdirSync(join(options.repo, ".ctxkit"));
    writeFileSync(
      options.projectFile,
      JSON.stringify({ $schema: "./schema.json", model: "ollama:llama3.1", server: { port: 9000 } }),
    );
    saveSetting("project", "server.host", "0.0.0.0", options);
    expect(readJson(options.projectFile)).toEqual({
      $schema: "./schema.json",
      model: "ollama:llama3.1",
      server: { port: 9000, host: "0.0.0.0" },
    });
  });

  it("replaces the file by rename and leaves no temporary file behind", () => {
    const options = sandbox();
    saveSetting("project", "model", "openai:gpt-4.1-mini", options);
    const before = statSync(options.projectFile).ino;
    saveSetting("project", "model", "anthropic:claude-sonnet-4-5", options);
    expect(statSync(options.projectFile).ino).not.toBe(before);
    expect(readdirSync(join(options.repo, ".ctxkit"))).toEqual(["settings.json"]);
    expect(readJson(options.projectFile)).toEqual({ model: "anthropic:claude-sonnet-4-5" });
  });

  it("validates first: a bad value or unknown key leaves the file byte for byte unchanged", () => {
    const options = sandbox();
    saveSetting("project", "contextWindow", 128_000, options);
    const original = readFileSync(options.projectFile, "utf8");
    const bad = thrown(() => saveSetting("project", "contextWindow", -5, options));
    expect(bad).toBeInstanceOf(ConfigError);
    expect(bad.message).toContain("expected a whole number above 0");
    const unknown = thrown(() => saveSetting("project", "server.prot", 80, options));
    expect(unknown.message).toContain("did you mean server.host, server.port?");
    expect(readFileSync(options.projectFile, "utf8")).toBe(original);
  });

  it("refuses to overwrite a file that is not valid JSON", () => {
    const options = sandbox();
    mkdirSync(join(options.repo, ".ctxkit"));
    writeFileSync(options.projectFile, '{"model": ');
    expect(thrown(() => saveSetting("project", "preset", "minimal", options))).toBeInstanceOf(
      SettingsFileError,
    );
    expect(readFileSync(options.projectFile, "utf8")).toBe('{"model": ');
  });

  it("writes user settings under XDG_CONFIG_HOME, readable only by the user", () => {
    const options = sandbox();
    const xdg = join(options.home, "xdg");
    const saved = saveSetting("user", "apiKeys.openai", "sk-test-1234567890", {
      ...options,
      env: { XDG_CONFIG_HOME: xdg },
    });
    expect(saved.file).toBe(join(xdg, "ctxkit", "settings.json"));
    expect(statSync(saved.file).mode & 0o077).toBe(0);
    expect(readJson(saved.file)).toEqual({ apiKeys: { openai: "sk-test-1234567890" } });
  });
});

describe("removeSetting", () => {
  it("removes the key, prunes empty groups and lets lower sources apply again", () => {
    const options = sandbox();
    saveSetting("user", "preset", "aggressive", options);
    saveSetting("project", "preset", "off", options);
    saveSetting("project", "memory.enabled", false, options);
    expect(loadSettings(options).settings.preset).toBe("off");
    removeSetting("project", "preset", options);
    removeSetting("project", "memory.enabled", options);
    expect(readJson(options.projectFile)).toEqual({});
    const loaded = loadSettings(options);
    expect(loaded.settings.preset).toBe("aggressive");
    expect(loaded.sources["preset"]?.kind).toBe("user");
  });

  it("does not create a file just to remove a key from it", () => {
    const options = sandbox();
    removeSetting("project", "model", options);
    expect(() => statSync(options.projectFile)).toThrow();
  });
});
