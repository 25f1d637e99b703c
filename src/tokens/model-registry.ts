import { z } from "zod";
import { ValidationError } from "../errors/errors.ts";
import { validate } from "../model/schemas.ts";
import { FAMILY_DEFAULTS, KNOWN_MODELS, UNKNOWN_MODEL } from "./known-models.ts";
import type { ModelInfo, ResolvedModel } from "./model-info.ts";
import { parseModelName } from "./model-name.ts";
import { TOKENIZER_FAMILIES } from "./tokenizer-family.ts";

/** Changes to one model, or a new model: `id` plus the fields to set. New models need `contextWindow`. */
export type ModelOverride = { readonly id: string } & Partial<Omit<ModelInfo, "id">>;

const tokenCount = z.number().int().positive();

const overrideSchema = z.object({
  id: z.string().trim().min(1, "a model override needs an id"),
  provider: z.string().min(1).optional(),
  contextWindow: tokenCount.optional(),
  maxOutputTokens: tokenCount.optional(),
  maxInputTokens: tokenCount.optional(),
  tokenizer: z.enum(TOKENIZER_FAMILIES).optional(),
  aliases: z.array(z.string().min(1)).optional(),
});

/** Characters that may follow a known name in a longer one (`claude-sonnet-4-5-20250929`, `llama3.1:8b`). */
function isBoundary(character: string | undefined): boolean {
  return (
    character === "-" || character === ":" || character === "@" || character === "_" || character === "."
  );
}

/**
 * Model information by name. Immutable: `with` returns a new registry, so overrides never leak between
 * users of the default one. Lookup order: exact id, alias, longest known name that prefixes the requested
 * one at a boundary, a family guessed from the name (`claude…`, `qwen…`), then a small generic default.
 *
 * @example
 * const registry = defaultModelRegistry.with({ id: "llama3.1", contextWindow: 32_768 });
 * registry.lookup("ollama:llama3.1:8b").contextWindow; // 32768
 * registry.lookup("claude-sonnet-4-5-20250929").id; // "claude-sonnet-4-5"
 */
export class ModelRegistry {
  readonly models: readonly ModelInfo[];
  readonly #byName = new Map<string, { model: ModelInfo; alias: boolean }>();
  readonly #namesLongestFirst: string[];
  readonly #resolved = new Map<string, ResolvedModel>();

  constructor(models: readonly ModelInfo[] = KNOWN_MODELS) {
    this.models = Object.freeze([...models]);
    for (const model of this.models) {
      for (const alias of model.aliases ?? []) this.#byName.set(alias.toLowerCase(), { model, alias: true });
    }
    for (const model of this.models) this.#byName.set(model.id, { model, alias: false });
    this.#namesLongestFirst = [...this.#byName.keys()].sort((a, b) => b.length - a.length);
  }

  /** The registry entry for `model` when one matches by id, alias or prefix; undefined otherwise. */
  find(model: string): ResolvedModel | undefined {
    const resolved = this.lookup(model);
    return resolved.match === "family" || resolved.match === "default" ? undefined : resolved;
  }

  /** Information for `model`; never fails (unknown models get a family guess or the generic default). */
  lookup(model: string): ResolvedModel {
    const cached = this.#resolved.get(model);
    if (cached !== undefined) return cached;
    const resolved = this.#resolve(model);
    this.#resolved.set(model, resolved);
    return resolved;
  }

  /**
   * A new registry with `overrides` applied: fields merged into the model with that id or alias, or new
   * models added (they need `contextWindow`; output defaults to 4,096, the tokenizer to a guess by name).
   * Ids may carry a provider or tag (`ollama:qwen3:32b`) to override just that variant.
   */
  with(...overrides: readonly ModelOverride[]): ModelRegistry {
    const models = [...this.models];
    for (const raw of overrides) {
      const override = validate(overrideSchema, raw, "model override");
      const parsed = parseModelName(override.id);
      const index = models.findIndex(
        (model) => model.id === parsed.name || (model.aliases ?? []).includes(parsed.name),
      );
      const { id: _id, ...fields } = override;
      if (index !== -1) {
        models[index] = Object.freeze({ ...models[index]!, ...fields });
        continue;
      }
      if (fields.contextWindow === undefined) {
        throw new ValidationError(
          `model "${override.id}" is not in the registry; give a new model its contextWindow`,
          [{ path: "contextWindow", message: "required for a new model" }],
        );
      }
      const guess = this.#guess(parsed.name);
      models.push(
        Object.freeze({
          provider: parsed.provider ?? guess?.provider ?? "custom",
          maxOutputTokens: 4_096,
          tokenizer: guess?.tokenizer ?? "generic",
          ...fields,
          contextWindow: fields.contextWindow,
          id: parsed.name,
        }),
      );
    }
    return new ModelRegistry(models);
  }

  #resolve(requested: string): ResolvedModel {
    const { provider, name } = parseModelName(requested);
    const direct = this.#byName.get(name);
    if (direct !== undefined) {
      return Object.freeze({ ...direct.model, requested, match: direct.alias ? "alias" : "exact" });
    }
    for (const known of this.#namesLongestFirst) {
      if (name.startsWith(known) && isBoundary(name[known.length])) {
        return Object.freeze({ ...this.#byName.get(known)!.model, requested, match: "prefix" });
      }
    }
    const guess = this.#guess(name);
    const base = guess ?? UNKNOWN_MODEL;
    return Object.freeze({
      ...base,
      id: name || base.id,
      provider: provider ?? base.provider,
      requested,
      match: guess === undefined ? "default" : "family",
    });
  }

  #guess(name: string): ModelInfo | undefined {
    const byStart = FAMILY_DEFAULTS.find((family) => name.startsWith(family.stem));
    return (
      byStart ?? FAMILY_DEFAULTS.find((family) => family.stem.length >= 4 && name.includes(family.stem))
    )?.model;
  }
}

/**
 * The registry of `KNOWN_MODELS`.
 *
 * @example
 * defaultModelRegistry.lookup("gpt-4.1-mini").contextWindow; // 1047576
 */
export const defaultModelRegistry = new ModelRegistry();
