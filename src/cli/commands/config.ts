import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { Option, type Command } from "commander";
import { loadSettings, type LoadSettingsOptions } from "../../config/load-settings.ts";
import {
  removeSetting,
  requireSettingDefinition,
  saveSetting,
  settingsFileFor,
  type SettingsScope,
} from "../../config/save-setting.ts";
import { describeEntrySource, settingEntries, type SettingEntry } from "../../config/setting-entries.ts";
import { parseSettingText } from "../../config/setting-value.ts";
import { echoedSettingValue, holdsSecret } from "../../config/secret-settings.ts";
import type { CliIo, CommandRegistration } from "../program.ts";

/** Where the command looks for settings; tests point it at a sandbox. */
export interface ConfigCommandOptions {
  cwd?: () => string;
  home?: () => string;
}

function shownValue(value: unknown): string {
  if (value === undefined) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

function table(rows: readonly (readonly string[])[]): string {
  const widths =
    rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? "").length))) ?? [];
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column] ?? 0))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

function jsonEntry(entry: SettingEntry) {
  return {
    key: entry.key,
    value: entry.value ?? null,
    source: entry.source,
    env: entry.env ?? null,
    allowed: entry.allowed,
  };
}

function scopeOf(flags: { user?: boolean; project?: boolean }): SettingsScope {
  return flags.user === true ? "user" : "project";
}

/** Tells the user when the value just written is hidden by a higher-precedence source. */
function shadowNotice(key: string, scope: SettingsScope, location: LoadSettingsOptions): string | undefined {
  let source;
  try {
    source = loadSettings(location).sources[key];
  } catch {
    return undefined; // another broken setting is reported by the next command that loads them
  }
  if (source?.kind === "env") return `note: ${source.variable} is set and overrides this value`;
  if (scope === "user" && source?.kind === "project") return `note: ${source.file} overrides this value`;
  return undefined;
}

/**
 * Builds the `ctxkit config` command: `list`, `get <key>`, `set <key> <value>`, `unset <key>` and `path`.
 *
 * @example
 * createProgram([configCommand({ cwd: () => "/work/repo" })], io);
 */
export function configCommand(options: ConfigCommandOptions = {}): CommandRegistration {
  return (program: Command, io: CliIo) => {
    const location = (): LoadSettingsOptions => ({
      cwd: options.cwd?.() ?? process.cwd(),
      env: io.env,
      home: options.home?.() ?? io.env["HOME"] ?? homedir(),
    });
    const print = (text: string): void => {
      io.stdout.write(`${text}\n`);
    };
    const config = program
      .command("config")
      .description(
        "show and change settings (precedence: CTXKIT_* env > project .ctxkit/settings.json > user ~/.config/ctxkit/settings.json > defaults)",
      );

    config
      .command("list")
      .description("every setting with its value and where it comes from")
      .option("--json", "print JSON")
      .option("--show-secrets", "print API keys in full")
      .action((flags: { json?: boolean; showSecrets?: boolean }) => {
        const entries = settingEntries(loadSettings(location()), {
          revealSecrets: flags.showSecrets === true,
        });
        if (flags.json === true) return print(JSON.stringify(entries.map(jsonEntry), null, 2));
        const rows = entries.map((entry) => [
          entry.key,
          shownValue(entry.value),
          describeEntrySource(entry.source),
        ]);
        print(table([["KEY", "VALUE", "SOURCE"], ...rows]));
      });

    config
      .command("get <key>")
      .description("one setting's value (API keys in full)")
      .option("--json", "print JSON with the source")
      .action((key: string, flags: { json?: boolean }) => {
        requireSettingDefinition(key);
        const entries = settingEntries(loadSettings(location()), { revealSecrets: true });
        const entry = entries.find((candidate) => candidate.key === key);
        if (entry === undefined) return;
        print(flags.json === true ? JSON.stringify(jsonEntry(entry), null, 2) : shownValue(entry.value));
      });

    config
      .command("set <key> <value>")
      .description("validate and save a setting (numbers, true/false and JSON are parsed)")
      .addOption(new Option("--user", "write the user file").conflicts("project"))
      .addOption(new Option("--project", "write the project file (default)").conflicts("user"))
      .option("--json", "print JSON")
      .action((key: string, text: string, flags: { user?: boolean; project?: boolean; json?: boolean }) => {
        const definition = requireSettingDefinition(key);
        const scope = scopeOf(flags);
        const saved = saveSetting(scope, key, parseSettingText(definition, text), location());
        if (flags.json === true) {
          const value = echoedSettingValue(definition, saved.value);
          print(JSON.stringify({ key, value, scope, file: saved.file }));
        } else
          print(`${key} = ${JSON.stringify(echoedSettingValue(definition, saved.value))} in ${saved.file}`);
        if (holdsSecret(definition, saved.value) && scope === "project") {
          io.stderr.write(
            "note: project settings are often committed; prefer --user or the provider's environment variable\n",
          );
        }
        const notice = shadowNotice(key, scope, location());
        if (notice !== undefined) io.stderr.write(`${notice}\n`);
      });

    config
      .command("unset <key>")
      .description("remove a setting from a settings file")
      .addOption(new Option("--user", "change the user file").conflicts("project"))
      .addOption(new Option("--project", "change the project file (default)").conflicts("user"))
      .action((key: string, flags: { user?: boolean; project?: boolean }) => {
        const saved = removeSetting(scopeOf(flags), key, location());
        print(`removed ${key} from ${saved.file}`);
      });

    config
      .command("path")
      .description("the settings files ctxkit reads and writes")
      .option("--json", "print JSON")
      .action((flags: { json?: boolean }) => {
        const where = location();
        const files = { user: settingsFileFor("user", where), project: settingsFileFor("project", where) };
        const state = (file: string) => (existsSync(file) ? "" : " (not created yet)");
        if (flags.json === true) print(JSON.stringify(files));
        else
          print(
            table([
              ["user", `${files.user}${state(files.user)}`],
              ["project", `${files.project}${state(files.project)}`],
            ]),
          );
      });
  };
}

/**
 * `ctxkit config`, reading settings from the process's working folder and home.
 *
 * @example
 * createProgram([registerConfig], io);
 */
export const registerConfig: CommandRegistration = configCommand();
