import type { SettingDefinition } from "./setting-definitions.ts";

const URL_PASSWORD = /^([a-z][a-z0-9+.-]*:\/\/[^/?#@:]*:)([^/?#@]+)@/i;

/**
 * Hides all but the last four characters of a secret.
 *
 * @example
 * maskSecret("sk-abcdefghijkl"); // "••••ijkl"
 */
export function maskSecret(value: string): string {
  return value.length > 8 ? `••••${value.slice(-4)}` : "••••";
}

/**
 * A URL with its password hidden (the rest, user and host included, is kept so it can be recognised).
 *
 * @example
 * maskUrlPassword("postgres://ctxkit:hunter2@db:5432/ctxkit"); // "postgres://ctxkit:••••@db:5432/ctxkit"
 */
export function maskUrlPassword(url: string): string {
  return url.replace(URL_PASSWORD, "$1••••@");
}

/**
 * True when a setting's value holds a secret: an API key, or a URL with a password in it.
 *
 * @example
 * holdsSecret(settingDefinition("pgUrl")!, "postgres://u:pw@db/x"); // true
 */
export function holdsSecret(definition: SettingDefinition, value: unknown): boolean {
  if (typeof value !== "string" || value === "") return false;
  if (definition.secret === "url-password") return URL_PASSWORD.test(value);
  return definition.secret === true;
}

/**
 * A setting's value as it may be shown: API keys masked, URL passwords hidden; other values unchanged.
 *
 * @example
 * shownSettingValue(settingDefinition("apiKeys.openai")!, "sk-abcdefghijkl"); // "••••ijkl"
 */
export function shownSettingValue(definition: SettingDefinition, value: unknown): unknown {
  if (!holdsSecret(definition, value)) return value;
  return definition.secret === "url-password"
    ? maskUrlPassword(value as string)
    : maskSecret(value as string);
}

/**
 * What a command that saved a setting says it saved: never an API key (not even masked), never a URL's password.
 *
 * @example
 * echoedSettingValue(settingDefinition("apiKeys.openai")!, "sk-abcdefghijkl"); // "(secret)"
 */
export function echoedSettingValue(definition: SettingDefinition, value: unknown): unknown {
  return definition.secret === true ? "(secret)" : shownSettingValue(definition, value);
}
