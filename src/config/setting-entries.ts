import type { GovernancePipeline } from "../governance/pipeline.ts";
import type { PresetOptions } from "../governance/preset-options.ts";
import { preset, presetOptions } from "../governance/presets.ts";
import { settingDefinitions, type SettingDefinition } from "./setting-definitions.ts";
import { shownSettingValue } from "./secret-settings.ts";
import { allowedValues } from "./setting-value.ts";
import { describeSource, type LoadedSettings, type SettingSource, type Settings } from "./settings.ts";

/** Where a listed value comes from: a settings source, the governance preset, or nowhere (unset). */
export type EntrySource =
  SettingSource | { readonly kind: "preset"; readonly preset: string } | { readonly kind: "unset" };

/** One row of `ctxkit config list`. */
export interface SettingEntry {
  readonly key: string;
  /** The effective value (API keys and URL passwords masked unless revealed); undefined when unset. */
  readonly value: unknown;
  readonly source: EntrySource;
  /** The environment variable that overrides it, if any. */
  readonly env: string | undefined;
  readonly allowed: string;
  readonly description: string;
}

/**
 * The governance pipeline the settings select: the preset with the `policy.*` overrides applied.
 *
 * @example
 * const pipeline = pipelineFromSettings(loadSettings().settings);
 */
export function pipelineFromSettings(settings: Pick<Settings, "preset" | "policy">): GovernancePipeline {
  return preset(settings.preset, settings.policy);
}

function valueAt(settings: Settings, key: string): unknown {
  let node: unknown = settings;
  for (const part of key.split(".")) node = (node as Record<string, unknown> | undefined)?.[part];
  return node;
}

function entryFor(
  definition: SettingDefinition,
  loaded: LoadedSettings,
  options: PresetOptions,
  revealSecrets: boolean,
): SettingEntry {
  const common = {
    key: definition.key,
    env: definition.env,
    allowed: allowedValues(definition),
    description: definition.description,
  };
  const source = loaded.sources[definition.key];
  const value = valueAt(loaded.settings, definition.key);
  if (source !== undefined) {
    const shown = revealSecrets ? value : shownSettingValue(definition, value);
    return { ...common, value: shown, source };
  }
  if (definition.key.startsWith("policy.")) {
    const field = definition.key.slice("policy.".length) as keyof PresetOptions;
    return { ...common, value: options[field], source: { kind: "preset", preset: loaded.settings.preset } };
  }
  return { ...common, value: undefined, source: { kind: "unset" } };
}

/**
 * Every setting with its effective value and source, in definition order. Preset knobs (`policy.*`) not overridden show
 * the preset's value with source `preset`.
 *
 * @example
 * for (const entry of settingEntries(loadSettings())) console.log(entry.key, entry.value, describeEntrySource(entry.source));
 */
export function settingEntries(
  loaded: LoadedSettings,
  options: { revealSecrets?: boolean } = {},
): SettingEntry[] {
  const knobs = presetOptions(loaded.settings.preset, loaded.settings.policy);
  return settingDefinitions.map((definition) =>
    entryFor(definition, loaded, knobs, options.revealSecrets ?? false),
  );
}

/**
 * An entry's source in words.
 *
 * @example
 * describeEntrySource({ kind: "preset", preset: "aggressive" }); // "preset aggressive"
 */
export function describeEntrySource(source: EntrySource): string {
  if (source.kind === "preset") return `preset ${source.preset}`;
  if (source.kind === "unset") return "unset";
  return describeSource(source);
}
