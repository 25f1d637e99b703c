import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError } from "../errors/errors.ts";
import { SettingsFileError } from "../errors/settings-file-error.ts";
import { loadSettings } from "./load-settings.ts";
import { describeEntrySource, pipelineFromSettings, settingEntries } from "./setting-entries.ts";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A home folder and a git repository with a nested working folder, in a fresh temp folder. */
function sandbox() {
  const root = mkdtempSync(join(tmpdir(), "ctxkit-settings-"));
  roots.push(root);
  const home = join(root, "home");
  const repo = join(root, "repo");
  const cwd = join(repo, "packages", "app");
  mkdirSync(join(repo, ".git"), { recursive: true });
  mkdirSync(cwd, { recursive: true });
  mkdirSync(home, { recursive: true });
  const userFile = join(home, ".config", "ctxkit", "settings.json");
  const projectFile = join(repo, ".ctxkit", "settings.json");
  const write = (file: string, content: unknown) => {
    mkdirSync(join(file, ".."), { recursive: true });
    writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content, null, 2));
  };
  return { root, home, repo, cwd, userFile, projectFile, write };
}

function thrown(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected an error");
}

describe("loadSettings", () => {
  it("gives defaults when there are no files and no variables", () => {
    const { cwd, home } = sandbox();
    const { settings, sources, files } = loadSettings({ cwd, env: {}, home });
    expect(settings.model).toBeUndefined();
    expect(settings.preset).toBe("default");
    expect(settings.sessionRetentionDays).toBe(30);
    expect(settings.maxRetries).toBe(2);
    expect(settings.server).toEqual({ host: "127.0.0.1", port: 7710 });
    expect(settings.db).toBe(join(home, ".ctxkit", "ctxkit.db"));
    expect(settings.policy).toEqual({});
    expect(settings.apiKeys).toEqual({});
    expect(sources["sessionRetentionDays"]).toEqual({ kind: "default" });
    expect(sources["model"]).toBeUndefined();
    expect(files).toEqual({ user: join(home, ".config", "ctxkit", "settings.json"), project: undefined });
  });

  it("env beats project beats user beats default, key by key", () => {
    const { cwd, home, userFile, projectFile, write } = sandbox();
    write(userFile, {
      model: "openai:gpt-4.1-mini",
      contextWindow: 1_000,
      policy: { maxTurns: 10 },
      server: { port: 9000 },
    });
    write(projectFile, {
      model: "anthropic:claude-sonnet-4-5",
      contextWindow: 2_000,
      policy: { compactionTrigger: 0.7 },
    });
    const { settings, sources } = loadSettings({ cwd, home, env: { CTXKIT_MODEL: "ollama:llama3.1" } });
    expect(settings.model).toBe("ollama:llama3.1");
    expect(sources["model"]).toEqual({ kind: "env", variable: "CTXKIT_MODEL" });
    expect(settings.contextWindow).toBe(2_000);
    expect(sources["contextWindow"]).toEqual({ kind: "project", file: projectFile });
    expect(settings.policy).toEqual({ maxTurns: 10, compactionTrigger: 0.7 });
    expect(sources["policy.maxTurns"]).toEqual({ kind: "user", file: userFile });
    expect(settings.server).toEqual({ host: "127.0.0.1", port: 9000 });
    expect(sources["server.host"]).toEqual({ kind: "default" });
  });

  it("the highest source that sets a value always wins (property)", () => {
    const { cwd, home, userFile, projectFile, write } = sandbox();
    const maybe = fc.option(fc.integer({ min: 1, max: 2_000_000 }), { nil: undefined });
    fc.assert(
      fc.property(maybe, maybe, maybe, (user, project, env) => {
        write(userFile, user === undefined ? {} : { contextWindow: user });
        write(projectFile, project === undefined ? {} : { contextWindow: project });
        const variables = env === undefined ? {} : { CTXKIT_CONTEXT_WINDOW: String(env) };
        const { settings, sources } = loadSettings({ cwd, home, env: variables });
        expect(settings.contextWindow).toBe(env ?? project ?? user);
        const expectedKind =
          env !== undefined
            ? "env"
            : project !== undefined
              ? "project"
              : user !== undefined
                ? "user"
                : undefined;
        expect(sources["contextWindow"]?.kind).toBe(expectedKind);
      }),
      { numRuns: 40 },
    );
  });

  it("respects an absolute XDG_CONFIG_HOME and ignores a relative one", () => {
    const { cwd, home, root, write } = sandbox();
    const xdg = join(root, "xdg");
    write(join(xdg, "ctxkit", "settings.json"), { preset: "aggressive" });
    expect(loadSettings({ cwd, home, env: { XDG_CONFIG_HOME: xdg } }).settings.preset).toBe("aggressive");
    expect(loadSettings({ cwd, home, env: { XDG_CONFIG_HOME: "relative/xdg" } }).settings.preset).toBe(
      "default",
    );
  });

  it("finds the project file from a nested folder but not beyond the .git folder", () => {
    const { cwd, home, root, repo, write } = sandbox();
    write(join(root, ".ctxkit", "settings.json"), { model: "openai:outside-the-repo" });
    expect(loadSettings({ cwd, home, env: {} }).settings.model).toBeUndefined();
    write(join(repo, "packages", ".ctxkit", "settings.json"), { model: "openai:nearest" });
    const loaded = loadSettings({ cwd, home, env: {} });
    expect(loaded.settings.model).toBe("openai:nearest");
    expect(loaded.files.project).toBe(join(repo, "packages", ".ctxkit", "settings.json"));
  });

  it("resolves path settings against the project root, home (~) and cwd (env)", () => {
    const { cwd, home, repo, projectFile, write } = sandbox();
    write(projectFile, { db: "./data/sessions.db" });
    expect(loadSettings({ cwd, home, env: {} }).settings.db).toBe(join(repo, "data", "sessions.db"));
    write(projectFile, { db: "~/ctxkit.db" });
    expect(loadSettings({ cwd, home, env: {} }).settings.db).toBe(join(home, "ctxkit.db"));
    expect(loadSettings({ cwd, home, env: { CTXKIT_DB: "local.db" } }).settings.db).toBe(
      join(cwd, "local.db"),
    );
  });

  it("parses numbers, booleans and words from environment variables", () => {
    const { cwd, home } = sandbox();
    const { settings } = loadSettings({
      cwd,
      home,
      env: {
        CTXKIT_MEMORY_ENABLED: "off",
        CTXKIT_POLICY_COMPACTION_TRIGGER: "0.7",
        CTXKIT_POLICY_CACHE_AWARE: "false",
        CTXKIT_PRESET: "minimal",
        CTXKIT_SERVER_HOST: "0.0.0.0",
        CTXKIT_PG_URL: "postgres://localhost/ctxkit",
        CTXKIT_SUMMARIZATION_MODEL: "",
      },
    });
    expect(settings.memory.enabled).toBe(false);
    expect(settings.policy).toEqual({ compactionTrigger: 0.7, cacheAware: false });
    expect(settings.preset).toBe("minimal");
    expect(settings.server.host).toBe("0.0.0.0");
    expect(settings.pgUrl).toBe("postgres://localhost/ctxkit");
    expect(settings.summarizationModel).toBeUndefined();
  });
});

describe("loadSettings: settings whose value is an object", () => {
  const rates = [0.5, 0.2, 0.1, 0.05, 0.03, 0.02, 0.01, 0.005, 0.001, 0];

  it("reads the policy's reuse rates from a file and, as JSON, from a variable", () => {
    const { cwd, home, projectFile, write } = sandbox();
    write(projectFile, { policy: { reuseRates: { read: rates } } });
    expect(loadSettings({ cwd, home, env: {} }).settings.policy).toEqual({ reuseRates: { read: rates } });
    const fromEnv = loadSettings({
      cwd,
      home,
      env: { CTXKIT_POLICY_REUSE_RATES: JSON.stringify({ shell: rates }) },
    });
    expect(fromEnv.settings.policy).toEqual({ reuseRates: { shell: rates } });
  });

  it("names the rule a bad value breaks, and says a JSON object is expected", () => {
    const { cwd, home } = sandbox();
    const rising = JSON.stringify({ read: rates.toReversed() });
    const error = thrown(() => loadSettings({ cwd, home, env: { CTXKIT_POLICY_REUSE_RATES: rising } }));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toContain("must not rise with age");
    expect(error.message).toContain("expected a JSON object");
  });
});

describe("loadSettings errors", () => {
  it("a bad value in a file names the setting, the file and the allowed values", () => {
    const { cwd, home, projectFile, write } = sandbox();
    write(projectFile, { preset: "turbo" });
    const error = thrown(() => loadSettings({ cwd, home, env: {} }));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).key).toBe("preset");
    expect(error.message).toContain(projectFile);
    expect(error.message).toContain("expected one of default, aggressive, minimal, off");
  });

  it("a bad environment value names the variable and the allowed range", () => {
    const { cwd, home } = sandbox();
    const window = thrown(() => loadSettings({ cwd, home, env: { CTXKIT_CONTEXT_WINDOW: "lots" } }));
    expect(window.message).toBe(
      'setting "contextWindow": "lots" from CTXKIT_CONTEXT_WINDOW is not allowed; expected a whole number above 0',
    );
    const share = thrown(() => loadSettings({ cwd, home, env: { CTXKIT_POLICY_TAIL_SHARE: "1.5" } }));
    expect(share.message).toContain("expected a number from 0 to 1");
  });

  it("a model without a known provider lists the providers", () => {
    const { cwd, home, userFile, write } = sandbox();
    write(userFile, { model: "gpt-4o" });
    const error = thrown(() => loadSettings({ cwd, home, env: {} }));
    expect((error as ConfigError).key).toBe("model");
    expect(error.message).toContain(userFile);
    expect(error.message).toContain("openai, anthropic, google, openai-compatible, ollama");
  });

  it("an unknown key names the file and the known keys at that level", () => {
    const { cwd, home, projectFile, write } = sandbox();
    write(projectFile, { server: { prot: 80 } });
    const error = thrown(() => loadSettings({ cwd, home, env: {} }));
    expect((error as ConfigError).key).toBe("server.prot");
    expect(error.message).toContain("known here: host, port");
    write(projectFile, { policy: 3 });
    expect(thrown(() => loadSettings({ cwd, home, env: {} })).message).toContain("must be an object");
  });

  it("malformed JSON names the file, line and column", () => {
    const { cwd, home, projectFile, write } = sandbox();
    write(projectFile, '{\n  "model": "openai:gpt-4.1",\n  "preset" "minimal"\n}\n');
    const error = thrown(() => loadSettings({ cwd, home, env: {} }));
    expect(error).toBeInstanceOf(SettingsFileError);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as SettingsFileError).position).toEqual({ line: 3, column: 12 });
    expect(error.message).toMatch(
      new RegExp(`^${projectFile.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:3:12: invalid JSON`),
    );
    write(projectFile, '{"model": "openai:gpt-4.1"');
    expect(thrown(() => loadSettings({ cwd, home, env: {} })).message).toContain(":1:27: invalid JSON");
    write(projectFile, '{\n  "model": ');
    const truncated = thrown(() => loadSettings({ cwd, home, env: {} }));
    expect(truncated.message).toContain(":2:12: invalid JSON: unexpected end of the file");
    write(projectFile, "[1, 2]");
    expect(thrown(() => loadSettings({ cwd, home, env: {} })).message).toContain("must hold a JSON object");
  });
});

describe("setting entries", () => {
  it("shows preset values for policy fields that are not overridden, and masks keys", () => {
    const { cwd, home, userFile, write } = sandbox();
    write(userFile, {
      preset: "aggressive",
      policy: { maxTurns: 12 },
      apiKeys: { openai: "sk-proj-abcdefgh1234" },
    });
    const loaded = loadSettings({ cwd, home, env: {} });
    const entries = new Map(settingEntries(loaded).map((entry) => [entry.key, entry]));
    expect(entries.get("policy.maxTurns")?.value).toBe(12);
    expect(entries.get("policy.maxTurns")?.source.kind).toBe("user");
    expect(entries.get("policy.compactionTrigger")?.value).toBe(0.7);
    expect(describeEntrySource(entries.get("policy.compactionTrigger")!.source)).toBe("preset aggressive");
    expect(entries.get("apiKeys.openai")?.value).toBe("••••1234");
    expect(entries.get("apiKeys.anthropic")?.source).toEqual({ kind: "unset" });
    const pipeline = pipelineFromSettings(loaded.settings);
    const byName = new Map(pipeline.processors.map((processor) => [processor.name, processor]));
    expect(byName.get("trim-turns")?.triggers).toEqual([{ kind: "turn-count", above: 12 }]);
    expect(byName.get("compact-history")?.triggers).toContainEqual({ kind: "payload-share", share: 0.7 });
  });
});
