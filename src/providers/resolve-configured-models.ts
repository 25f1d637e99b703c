import type { LanguageModelV4 } from "@ai-sdk/provider";
import { ConfigError } from "../errors/errors.ts";
import type { ApiKeyName } from "./provider-catalog.ts";
import { resolveModel, type ResolveModelOptions } from "./resolve-model.ts";

/** The slice of ctxkit settings that model resolution reads (resolved settings satisfy it). */
export interface ModelSettings {
  readonly model?: string | undefined;
  readonly summarizationModel?: string | undefined;
  readonly baseURL?: string | undefined;
  readonly apiKeys?: Readonly<Partial<Record<ApiKeyName, string | undefined>>> | undefined;
}

/** The primary model and the one used for summaries (the primary one when no other is set). */
export interface ConfiguredModels {
  readonly model: LanguageModelV4;
  readonly summarizationModel: LanguageModelV4;
}

/**
 * Resolves the `model` and `summarizationModel` settings. Without a `model` setting it throws ConfigError
 * saying how to set one; an empty `summarizationModel` falls back to the primary model.
 *
 * @example
 * const { settings } = loadSettings({ cwd: process.cwd(), env: process.env, home: os.homedir() });
 * const { model, summarizationModel } = await resolveConfiguredModels(settings, { env: process.env });
 */
export async function resolveConfiguredModels(
  settings: ModelSettings,
  options: Omit<ResolveModelOptions, "settingKey" | "baseURL" | "apiKeys"> = {},
): Promise<ConfiguredModels> {
  if (settings.model === undefined || settings.model.trim() === "") {
    throw new ConfigError(
      "model",
      "no model configured; set CTXKIT_MODEL=provider:model (e.g. openai:gpt-4.1-mini or ollama:llama3.1) " +
        "or run: ctxkit config set model <provider:model>",
    );
  }
  const shared = { ...options, baseURL: settings.baseURL, apiKeys: settings.apiKeys };
  const model = await resolveModel(settings.model, { ...shared, settingKey: "model" });
  const summarizationSpec = settings.summarizationModel?.trim();
  const summarizationModel =
    summarizationSpec === undefined || summarizationSpec === ""
      ? model
      : await resolveModel(summarizationSpec, { ...shared, settingKey: "summarizationModel" });
  return { model, summarizationModel };
}
