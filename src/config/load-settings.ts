import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { settingDefinitions, type SettingDefinition } from "./setting-definitions.ts";
import { parseSettingText } from "./setting-value.ts";
import { flattenSettings, readSettingsObject } from "./settings-file.ts";
import { findProjectSettings, projectRootOf, userSettingsPath } from "./settings-paths.ts";
import type { LoadedSettings, SettingSource, Settings } from "./settings.ts";

/** Where to look. Each field defaults to this process's own. */
export interface LoadSettingsOptions {
  cwd?: string;
  env?: Readonly<Record<string, string | undefined>>;
  home?: string;
}

interface Layer {
  readonly source: SettingSource;
  readonly values: ReadonlyMap<string, unknown>;
  /** Folder that relative paths in this layer resolve against. */
  readonly base: string;
}

function expandPath(value: string, base: string, home: string): string {
  if (value === ":memory:") return value;
  if (value === "~") return home;
  if (value.startsWith("~/")) return join(home, value.slice(2));
  return isAbsolute(value) ? value : resolve(base, value);
}

function environmentLayer(env: Readonly<Record<string, string | undefined>>, cwd: string): Layer[] {
  return settingDefinitions.flatMap((definition): Layer[] => {
    const text = definition.env === undefined ? undefined : env[definition.env];
    if (definition.env === undefined || text === undefined || text === "") return [];
    const value = parseSettingText(definition, text, `from ${definition.env}`);
    return [
      {
        source: { kind: "env", variable: definition.env },
        values: new Map([[definition.key, value]]),
        base: cwd,
      },
    ];
  });
}

function fileLayer(file: string, kind: "project" | "user", base: string): Layer | undefined {
  const object = readSettingsObject(file);
  if (object === undefined) return undefined;
  return { source: { kind, file }, values: flattenSettings(object, file), base };
}

function setPath(target: Record<string, unknown>, key: string, value: unknown): void {
  const parts = key.split(".");
  let node = target;
  for (const part of parts.slice(0, -1)) {
    node[part] ??= {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts.at(-1) ?? key] = value;
}

function resolvedValue(definition: SettingDefinition, value: unknown, base: string, home: string): unknown {
  return definition.isPath === true && typeof value === "string" ? expandPath(value, base, home) : value;
}

/**
 * Loads ctxkit settings. Precedence, highest first: environment (`CTXKIT_MODEL`, `CTXKIT_DB`,
 * `CTXKIT_POLICY_MAX_TURNS`…), the project's `.ctxkit/settings.json` (nearest from `cwd` upwards, stopping at
 * a `.git` folder), the user's `~/.config/ctxkit/settings.json` (`XDG_CONFIG_HOME` respected), defaults.
 * Files merge key by key. A bad value throws ConfigError naming the setting, its file or variable and what is
 * allowed; malformed JSON throws SettingsFileError with the position. Reads the disk each call (no cache).
 *
 * @example
 * const { settings, sources } = loadSettings({ cwd: process.cwd(), env: process.env, home: os.homedir() });
 * sources["model"]; // { kind: "env", variable: "CTXKIT_MODEL" }
 */
export function loadSettings(options: LoadSettingsOptions = {}): LoadedSettings {
  const cwd = resolve(options.cwd ?? process.cwd());
  const env = options.env ?? process.env;
  const home = options.home ?? homedir();
  const userFile = userSettingsPath({ env, home });
  const projectFile = findProjectSettings(cwd);
  // Lowest precedence first; later layers overwrite earlier ones key by key.
  const layers = [
    fileLayer(userFile, "user", home),
    projectFile === undefined ? undefined : fileLayer(projectFile, "project", projectRootOf(projectFile)),
    ...environmentLayer(env, cwd),
  ].filter((layer): layer is Layer => layer !== undefined);

  const settings: Record<string, unknown> = { apiKeys: {}, policy: {}, server: {}, memory: {} };
  const sources: Record<string, SettingSource> = {};
  for (const definition of settingDefinitions) {
    const layer = layers.findLast((candidate) => candidate.values.has(definition.key));
    if (layer !== undefined) {
      setPath(
        settings,
        definition.key,
        resolvedValue(definition, layer.values.get(definition.key), layer.base, home),
      );
      sources[definition.key] = layer.source;
    } else if (definition.defaultValue !== undefined) {
      setPath(settings, definition.key, definition.defaultValue({ env, home }));
      sources[definition.key] = { kind: "default" };
    } else {
      setPath(settings, definition.key, undefined);
    }
  }
  for (const group of ["apiKeys", "policy"]) {
    const entries = Object.entries(settings[group] as Record<string, unknown>).filter(
      ([, value]) => value !== undefined,
    );
    settings[group] = Object.fromEntries(entries);
  }
  return {
    settings: settings as unknown as Settings,
    sources,
    files: { user: userFile, project: projectFile },
  };
}
