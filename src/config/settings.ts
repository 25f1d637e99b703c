import type { PresetOptionsInput } from "../governance/preset-options.ts";
import type { PresetName } from "../governance/presets.ts";
import type { ApiKeyName } from "../providers/provider-catalog.ts";

/** Resolved ctxkit settings. Optional values are undefined when no source sets them. */
export interface Settings {
  /** Primary model, `provider:model`. */
  model: string | undefined;
  /** Model for automatic summaries; undefined or empty means the primary model. */
  summarizationModel: string | undefined;
  /** Base URL of an OpenAI-compatible server. */
  baseURL: string | undefined;
  /** Keys used when the provider's environment variable is not set. */
  apiKeys: Partial<Record<ApiKeyName, string>>;
  /** Context window override, in tokens. */
  contextWindow: number | undefined;
  /** Tokens reserved for output. */
  maxOutputTokens: number | undefined;
  /** Retries of a failed provider call. Default 2. */
  maxRetries: number;
  /** Time limit of one provider call, in ms. */
  requestTimeoutMs: number | undefined;
  /** Governance preset. Default "default". */
  preset: PresetName;
  /** Knobs of the preset that override its values (`policy.maxTurns`, …: see `presetOptionsSchema`). */
  policy: PresetOptionsInput;
  /** SQLite database file (absolute). Default `~/.ctxkit/ctxkit.db` (`CTXKIT_DB` overrides). */
  db: string;
  /** PostgreSQL URL; when set, sessions are stored there. */
  pgUrl: string | undefined;
  /** Days an idle session is kept; 0 keeps them forever. Default 30. */
  sessionRetentionDays: number;
  /** Where `ctxkit serve` listens. Default 127.0.0.1:7710. */
  server: { host: string; port: number };
  /** Long-term memory options. */
  memory: { enabled: boolean; maxCoreTokens: number; recallLimit: number };
}

/** Where one setting's value came from. */
export type SettingSource =
  | { readonly kind: "default" }
  | { readonly kind: "env"; readonly variable: string }
  | { readonly kind: "project"; readonly file: string }
  | { readonly kind: "user"; readonly file: string };

/** Settings plus where each value came from. */
export interface LoadedSettings {
  readonly settings: Settings;
  /** Source of every key that has a value, defaults included (dotted keys: `server.port`, `policy.maxTurns`). */
  readonly sources: Readonly<Record<string, SettingSource>>;
  /** The files that were looked at: the user file (whether or not it exists) and the project file found. */
  readonly files: { readonly user: string; readonly project: string | undefined };
}

/**
 * A source in words, for messages and `ctxkit config list`.
 *
 * @example
 * describeSource({ kind: "env", variable: "CTXKIT_MODEL" }); // "env CTXKIT_MODEL"
 */
export function describeSource(source: SettingSource): string {
  switch (source.kind) {
    case "default":
      return "default";
    case "env":
      return `env ${source.variable}`;
    case "project":
    case "user":
      return `${source.kind} ${source.file}`;
  }
}
