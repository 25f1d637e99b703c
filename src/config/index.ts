export type { Settings, SettingSource, LoadedSettings } from "./settings.ts";
export { describeSource } from "./settings.ts";
export { loadSettings, type LoadSettingsOptions } from "./load-settings.ts";
export {
  saveSetting,
  removeSetting,
  settingsFileFor,
  requireSettingDefinition,
  type SettingsScope,
  type SavedSetting,
} from "./save-setting.ts";
export {
  settingDefinitions,
  settingDefinition,
  environmentVariableFor,
  type SettingDefinition,
  type DefaultContext,
} from "./setting-definitions.ts";
export { parseSettingText, validateSettingValue, allowedValues } from "./setting-value.ts";
export { readSettingsObject, flattenSettings, type SettingsObject } from "./settings-file.ts";
export {
  userSettingsPath,
  findProjectSettings,
  projectSettingsTarget,
  projectRootOf,
  projectSettingsFile,
  type SettingsLocation,
} from "./settings-paths.ts";
export {
  settingEntries,
  describeEntrySource,
  pipelineFromSettings,
  type SettingEntry,
  type EntrySource,
} from "./setting-entries.ts";
export {
  maskSecret,
  maskUrlPassword,
  holdsSecret,
  shownSettingValue,
  echoedSettingValue,
} from "./secret-settings.ts";
