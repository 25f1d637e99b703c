import { join } from "node:path";
import { z } from "zod";
import { CtxkitError } from "../errors/ctxkit-error.ts";
import { presetOptionsSchema } from "../governance/preset-options.ts";
import { presetNames } from "../governance/presets.ts";
import { parseModelSpec } from "../providers/model-spec.ts";
import { providerNames } from "../providers/provider-catalog.ts";

/** What a computed default may depend on. */
export interface DefaultContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly home: string;
}

/** One leaf setting: its dotted key, schema, environment variable and default. */
export interface SettingDefinition {
  /** Dotted key, as in `ctxkit config get server.port`; nested objects in settings files. */
  readonly key: string;
  readonly schema: z.ZodType;
  readonly description: string;
  /** `CTXKIT_…` variable that overrides the files; none for secrets (providers' own variables apply). */
  readonly env: string | undefined;
  /** Value when no source sets it; undefined means "unset". */
  readonly defaultValue?: (context: DefaultContext) => unknown;
  /** Allowed values in words, when the schema alone does not say it well. */
  readonly allowed?: string;
  /**
   * A secret, masked when listed and kept in files only their owner can read: `true` for the whole value (an
   * API key), `"url-password"` for the password inside a URL.
   */
  readonly secret?: true | "url-password";
  /** A filesystem path: `~/` expands to home, relative paths resolve against the file's project (or cwd). */
  readonly isPath?: boolean;
}

/**
 * The environment variable of a setting key.
 *
 * @example
 * environmentVariableFor("baseURL"); // "CTXKIT_BASE_URL"
 * environmentVariableFor("policy.maxTurns"); // "CTXKIT_POLICY_MAX_TURNS"
 */
export function environmentVariableFor(key: string): string {
  const words = key.split(".").map((part) => part.replace(/([a-z0-9])([A-Z])/g, "$1_$2"));
  return `CTXKIT_${words.join("_").toUpperCase()}`;
}

const modelString = z.string().superRefine((value, context) => {
  if (value.trim() === "") return;
  try {
    parseModelSpec(value);
  } catch (error) {
    context.addIssue({
      code: "custom",
      message: CtxkitError.isInstance(error) ? error.message : String(error),
    });
  }
});

const httpURL = z.url({ protocol: /^https?$/ });
const positiveInteger = z.number().int().positive();
const secretText = z.string().min(1);

type Draft = Omit<SettingDefinition, "env"> & { env?: string | false };

const drafts: Draft[] = [
  {
    key: "model",
    schema: modelString,
    description: "primary model, as provider:model",
    allowed: `provider:model with provider one of ${providerNames.join(", ")} (e.g. openai:gpt-4.1-mini)`,
  },
  {
    key: "summarizationModel",
    schema: modelString,
    description: "model for automatic summaries; empty means the primary model",
    allowed: "provider:model like the model setting, or empty for the primary model",
  },
  {
    key: "baseURL",
    schema: httpURL,
    description: "base URL of an OpenAI-compatible server",
    allowed: "an http(s) URL such as http://127.0.0.1:11434/v1",
  },
  ...(["openai", "anthropic", "google", "openrouter", "openaiCompatible"] as const).map((name): Draft => ({
    key: `apiKeys.${name}`,
    schema: secretText,
    description: `API key for ${name}, used when its environment variable is not set`,
    env: false,
    secret: true,
    allowed: "a non-empty key",
  })),
  {
    key: "contextWindow",
    schema: positiveInteger,
    description: "model context window in tokens (overrides the registry)",
  },
  { key: "maxOutputTokens", schema: positiveInteger, description: "tokens reserved for the model's output" },
  {
    key: "maxRetries",
    schema: z.number().int().min(0).max(10),
    description: "retries of a failed provider call (rate limits, network, 5xx)",
    defaultValue: () => 2,
  },
  { key: "requestTimeoutMs", schema: positiveInteger, description: "time limit of one provider call, in ms" },
  {
    key: "preset",
    schema: z.enum(presetNames as [string, ...string[]]),
    description: "governance preset; policy.* settings override its values",
    defaultValue: () => "default",
  },
  ...Object.entries(presetOptionsSchema.shape).map(([field, schema]): Draft => ({
    key: `policy.${field}`,
    schema: schema as z.ZodType,
    description: `preset override: ${field}`,
  })),
  {
    key: "db",
    schema: z.string().min(1),
    description: "SQLite database file",
    isPath: true,
    allowed: "a file path",
    defaultValue: ({ home }) => join(home, ".ctxkit", "ctxkit.db"),
  },
  {
    key: "pgUrl",
    schema: z.string().regex(/^postgres(ql)?:\/\//),
    description: "PostgreSQL connection URL; when set, sessions are stored there instead of SQLite",
    allowed: "a postgres:// or postgresql:// URL",
    secret: "url-password",
  },
  {
    key: "sessionRetentionDays",
    schema: z.number().int().min(0),
    description:
      "idle days after which `ctxkit sessions prune` deletes a session (0 keeps all); opening never deletes",
    defaultValue: () => 30,
  },
  {
    key: "server.host",
    schema: z.string().min(1),
    description: "address the server binds",
    defaultValue: () => "127.0.0.1",
  },
  {
    key: "server.port",
    schema: z.number().int().min(0).max(65_535),
    description: "port the server listens on (0 picks a free one)",
    defaultValue: () => 7710,
  },
  {
    key: "memory.enabled",
    schema: z.boolean(),
    description: "long-term memory on or off",
    defaultValue: () => true,
  },
  {
    key: "memory.maxCoreTokens",
    schema: z.number().int().min(0),
    description: "token budget of core memories injected into the system prompt",
    defaultValue: () => 2_000,
  },
  {
    key: "memory.recallLimit",
    schema: positiveInteger,
    description: "most memories returned by one recall",
    defaultValue: () => 5,
  },
];

/**
 * Every setting ctxkit reads, in the order `ctxkit config list` shows them.
 *
 * @example
 * settingDefinitions.find((definition) => definition.key === "model")?.env; // "CTXKIT_MODEL"
 */
export const settingDefinitions: readonly SettingDefinition[] = drafts.map((draft) => ({
  ...draft,
  env: draft.env === false ? undefined : (draft.env ?? environmentVariableFor(draft.key)),
}));

const byKey = new Map(settingDefinitions.map((definition) => [definition.key, definition]));

/**
 * The definition of `key`, or undefined when there is no such setting.
 *
 * @example
 * settingDefinition("server.port")?.env; // "CTXKIT_SERVER_PORT"
 */
export function settingDefinition(key: string): SettingDefinition | undefined {
  return byKey.get(key);
}
