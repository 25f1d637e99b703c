import { existsSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";

/** Where settings files are looked for. */
export interface SettingsLocation {
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly home: string;
}

/**
 * The settings file inside a project folder.
 *
 * @example
 * join(repositoryRoot, projectSettingsFile); // "<root>/.ctxkit/settings.json"
 */
export const projectSettingsFile = join(".ctxkit", "settings.json");

/**
 * The user settings file: `$XDG_CONFIG_HOME/ctxkit/settings.json`, else `~/.config/ctxkit/settings.json`.
 *
 * @example
 * userSettingsPath({ env: {}, home: "/home/ada" }); // "/home/ada/.config/ctxkit/settings.json"
 */
export function userSettingsPath(location: Pick<SettingsLocation, "env" | "home">): string {
  const configured = location.env["XDG_CONFIG_HOME"];
  // The XDG spec says relative values are invalid and must be ignored.
  const base =
    configured !== undefined && isAbsolute(configured) ? configured : join(location.home, ".config");
  return join(base, "ctxkit", "settings.json");
}

/** The walk from `cwd` upwards: each folder until the filesystem root or the first one holding `.git`. */
function* foldersUp(cwd: string): Generator<string> {
  let folder = resolve(cwd);
  for (;;) {
    yield folder;
    const parent = dirname(folder);
    if (existsSync(join(folder, ".git")) || parent === folder) return;
    folder = parent;
  }
}

/**
 * The nearest `.ctxkit/settings.json` from `cwd` upwards, stopping at the filesystem root or a folder that
 * holds `.git` (that folder is still searched). Undefined when there is none.
 *
 * @example
 * findProjectSettings("/work/repo/src"); // "/work/repo/.ctxkit/settings.json" when that file exists
 */
export function findProjectSettings(cwd: string): string | undefined {
  for (const folder of foldersUp(cwd)) {
    const candidate = join(folder, projectSettingsFile);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/**
 * Where `saveSetting("project", …)` writes: the existing project file, else `.ctxkit/settings.json` at the
 * repository root (the folder holding `.git`), else in `cwd`.
 *
 * @example
 * projectSettingsTarget("/work/repo/src"); // "/work/repo/.ctxkit/settings.json" inside a git repository
 */
export function projectSettingsTarget(cwd: string): string {
  const found = findProjectSettings(cwd);
  if (found !== undefined) return found;
  for (const folder of foldersUp(cwd)) {
    if (existsSync(join(folder, ".git"))) return join(folder, projectSettingsFile);
  }
  return join(resolve(cwd), projectSettingsFile);
}

/**
 * The project folder a project settings file belongs to (the parent of `.ctxkit`).
 *
 * @example
 * projectRootOf("/work/repo/.ctxkit/settings.json"); // "/work/repo"
 */
export function projectRootOf(settingsFile: string): string {
  return dirname(dirname(settingsFile));
}
