import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, openSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { ConfigError } from "../errors/errors.ts";
import { holdsSecret } from "./secret-settings.ts";
import { settingDefinition, settingDefinitions, type SettingDefinition } from "./setting-definitions.ts";
import { validateSettingValue } from "./setting-value.ts";
import { readSettingsObject, type SettingsObject } from "./settings-file.ts";
import { projectSettingsTarget, userSettingsPath } from "./settings-paths.ts";
import type { LoadSettingsOptions } from "./load-settings.ts";
import { ensureDirectory } from "../errors/ensure-directory.ts";

/** Which settings file to change. */
export type SettingsScope = "project" | "user";

/** What a save changed. */
export interface SavedSetting {
  readonly key: string;
  /** The value written, or undefined when the key was removed. */
  readonly value: unknown;
  readonly file: string;
}

/**
 * The definition of `key`, or a ConfigError listing the keys that start the same way (or all top-level ones).
 *
 * @example
 * requireSettingDefinition("server.port").env; // "CTXKIT_SERVER_PORT"
 */
export function requireSettingDefinition(key: string): SettingDefinition {
  const definition = settingDefinition(key);
  if (definition !== undefined) return definition;
  const head = key.split(".")[0] ?? key;
  const related = settingDefinitions
    .filter((candidate) => candidate.key.startsWith(`${head}.`))
    .map((candidate) => candidate.key);
  const hint =
    related.length > 0
      ? `did you mean ${related.slice(0, 8).join(", ")}${related.length > 8 ? ", …" : ""}?`
      : "run `ctxkit config list` to see every setting";
  throw new ConfigError(key, `unknown setting; ${hint}`);
}

/**
 * The file a scope writes to: the user file, or the project file (the nearest existing one, else at the
 * repository root, else in `cwd`).
 *
 * @example
 * settingsFileFor("user", { env: {}, home: "/home/ada" }); // "/home/ada/.config/ctxkit/settings.json"
 */
export function settingsFileFor(scope: SettingsScope, options: LoadSettingsOptions = {}): string {
  if (scope === "user")
    return userSettingsPath({ env: options.env ?? process.env, home: options.home ?? homedir() });
  return projectSettingsTarget(resolve(options.cwd ?? process.cwd()));
}

function withValue(object: SettingsObject, parts: readonly string[], value: unknown): SettingsObject {
  const [head, ...rest] = parts;
  if (head === undefined) return object;
  if (rest.length === 0) {
    const { [head]: _removed, ...others } = object;
    return value === undefined ? others : { ...others, [head]: value };
  }
  const child = object[head];
  const updated = withValue(
    typeof child === "object" && child !== null && !Array.isArray(child) ? (child as SettingsObject) : {},
    rest,
    value,
  );
  const { [head]: _old, ...others } = object;
  return Object.keys(updated).length === 0 ? others : { ...others, [head]: updated };
}

/** Writes beside the target and renames over it, so readers see the old file or the new one, never half. */
function writeAtomically(file: string, text: string, mode: number): void {
  ensureDirectory(dirname(file));
  const temporary = join(
    dirname(file),
    `.${basename(file)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`,
  );
  try {
    const descriptor = openSync(temporary, "wx", mode);
    try {
      writeSync(descriptor, text);
      fsyncSync(descriptor);
    } finally {
      closeSync(descriptor);
    }
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

/** True when any setting of a settings object holds a secret (an API key, a URL with a password). */
function holdsAnySecret(object: SettingsObject): boolean {
  return settingDefinitions.some((definition) => {
    if (definition.secret === undefined) return false;
    let node: unknown = object;
    for (const part of definition.key.split("."))
      node = (node as Record<string, unknown> | undefined)?.[part];
    return holdsSecret(definition, node);
  });
}

/** True when a file exists and only its owner may read it. */
function isPrivate(file: string): boolean {
  try {
    return (statSync(file).mode & 0o077) === 0;
  } catch {
    return false;
  }
}

function update(
  scope: SettingsScope,
  key: string,
  value: unknown,
  options: LoadSettingsOptions,
): SavedSetting {
  const file = settingsFileFor(scope, options);
  // Reading first also refuses to overwrite a file the user broke by hand: its error names the position.
  const current = readSettingsObject(file);
  if (current === undefined && value === undefined) return { key, value, file };
  const next = withValue(current ?? {}, key.split("."), value);
  // A file that holds a key or a password (or may: the user file), or that was already private, is written
  // readable by its owner only — also when it existed with wider rights, since the rename replaces it.
  const mode = scope === "user" || holdsAnySecret(next) || isPrivate(file) ? 0o600 : 0o644;
  try {
    writeAtomically(file, `${JSON.stringify(next, null, 2)}\n`, mode);
  } catch (error) {
    const reason = (error as Error).message;
    throw new ConfigError(key, `could not write ${file} (${reason}); check that its folder is writable`, {
      cause: error,
    });
  }
  return { key, value, file };
}

/**
 * Validates `value` for `key` and writes it into the project or user settings file, atomically (temp file +
 * rename). Other keys in the file are kept. Throws ConfigError for an unknown key or a bad value (the file is
 * then untouched).
 *
 * @example
 * saveSetting("user", "model", "anthropic:claude-sonnet-4-5");
 * saveSetting("project", "policy.maxTurns", 30, { cwd: "/work/repo" });
 */
export function saveSetting(
  scope: SettingsScope,
  key: string,
  value: unknown,
  options: LoadSettingsOptions = {},
): SavedSetting {
  const definition = requireSettingDefinition(key);
  const valid = validateSettingValue(definition, value);
  return update(scope, key, valid, options);
}

/**
 * Removes `key` from the project or user settings file (atomically), so lower-precedence sources apply again.
 *
 * @example
 * removeSetting("project", "model");
 */
export function removeSetting(
  scope: SettingsScope,
  key: string,
  options: LoadSettingsOptions = {},
): SavedSetting {
  requireSettingDefinition(key);
  return update(scope, key, undefined, options);
}
