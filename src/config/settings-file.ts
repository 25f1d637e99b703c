import { readFileSync } from "node:fs";
import { ConfigError } from "../errors/errors.ts";
import { SettingsFileError, type FilePosition } from "../errors/settings-file-error.ts";
import { settingDefinition, settingDefinitions } from "./setting-definitions.ts";
import { validateSettingValue } from "./setting-value.ts";

/** A JSON object as read from a settings file. */
export type SettingsObject = Record<string, unknown>;

function positionAt(text: string, offset: number): FilePosition {
  const before = text.slice(0, offset).split("\n");
  return { line: before.length, column: (before.at(-1)?.length ?? 0) + 1 };
}

/**
 * Reads a settings file as a JSON object; undefined when the file does not exist. A file that is not JSON,
 * or not an object, throws SettingsFileError with the file and the line and column of the problem.
 *
 * @example
 * readSettingsObject("/repo/.ctxkit/settings.json"); // { model: "ollama:llama3.1", policy: { maxTurns: 30 } }
 */
export function readSettingsObject(file: string): SettingsObject | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8").replace(/^\uFEFF/, "");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new SettingsFileError(file, `cannot be read (${(error as Error).message})`, undefined, {
      cause: error,
    });
  }
  if (text.trim() === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    const offset = /at position (\d+)/.exec(message)?.[1];
    const position = positionAt(text, offset === undefined ? text.length : Number(offset));
    const detail = message
      .replace(/ in JSON at position \d+.*$/, "")
      .replace(/^Unexpected end of JSON input$/, "unexpected end of the file");
    throw new SettingsFileError(file, `invalid JSON: ${detail}`, position, { cause: error });
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new SettingsFileError(file, 'must hold a JSON object such as {"model": "openai:gpt-4.1-mini"}', {
      line: 1,
      column: 1,
    });
  }
  return parsed as SettingsObject;
}

const groupNames = new Set(
  settingDefinitions.flatMap((definition) =>
    definition.key
      .split(".")
      .slice(0, -1)
      .map((_, index, parts) => parts.slice(0, index + 1).join(".")),
  ),
);

function namesUnder(prefix: string): string[] {
  const depth = prefix === "" ? 0 : prefix.split(".").length;
  const names = settingDefinitions
    .filter((definition) => prefix === "" || definition.key.startsWith(`${prefix}.`))
    .map((definition) => definition.key.split(".")[depth] ?? "");
  return [...new Set(names)];
}

function isPlainObject(value: unknown): value is SettingsObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The leaf settings of a settings object, by dotted key, each validated. Unknown keys and bad values throw
 * ConfigError naming the key, the file and what is allowed.
 *
 * @example
 * flattenSettings({ server: { port: 8080 } }, "/repo/.ctxkit/settings.json"); // Map { "server.port" => 8080 }
 */
export function flattenSettings(object: SettingsObject, file: string, prefix = ""): Map<string, unknown> {
  const leaves = new Map<string, unknown>();
  for (const [name, value] of Object.entries(object)) {
    if (prefix === "" && name === "$schema") continue;
    const key = prefix === "" ? name : `${prefix}.${name}`;
    const definition = settingDefinition(key);
    if (definition !== undefined) {
      leaves.set(key, validateSettingValue(definition, value, `in ${file}`));
    } else if (groupNames.has(key)) {
      if (!isPlainObject(value)) {
        throw new ConfigError(
          key,
          `must be an object in ${file}; its keys are ${namesUnder(key).join(", ")}`,
        );
      }
      for (const [leafKey, leafValue] of flattenSettings(value, file, key)) leaves.set(leafKey, leafValue);
    } else {
      throw new ConfigError(key, `unknown setting in ${file}; known here: ${namesUnder(prefix).join(", ")}`);
    }
  }
  return leaves;
}
