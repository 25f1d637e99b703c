import type { ModelInfo } from "./model-info.ts";
import type { TokenizerFamily } from "./tokenizer-family.ts";

function model(
  id: string,
  provider: string,
  contextWindow: number,
  maxOutputTokens: number,
  tokenizer: TokenizerFamily,
  extra: Pick<ModelInfo, "maxInputTokens" | "aliases"> = {},
): ModelInfo {
  return Object.freeze({ id, provider, contextWindow, maxOutputTokens, tokenizer, ...extra });
}

const M = 1_048_576;
/** GPT-5 family: 400k total, of which at most 272k prompt. */
const GPT5_INPUT = { maxInputTokens: 272_000 };

/**
 * Models ctxkit knows out of the box (provider documentation, mid-2026). Dated snapshots match by prefix
 * (`claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`). Local models list their native context: Ollama
 * serves a smaller `num_ctx` unless told otherwise, so register the value you run with (`registry.with`).
 * Ollama does not cap output; 8,192 is listed as a practical output reservation.
 */
export const KNOWN_MODELS: readonly ModelInfo[] = Object.freeze([
  // OpenAI
  model("gpt-4o", "openai", 128_000, 16_384, "o200k_base", { aliases: ["chatgpt-4o-latest"] }),
  model("gpt-4o-mini", "openai", 128_000, 16_384, "o200k_base"),
  model("gpt-4.1", "openai", 1_047_576, 32_768, "o200k_base"),
  model("gpt-4.1-mini", "openai", 1_047_576, 32_768, "o200k_base"),
  model("gpt-4.1-nano", "openai", 1_047_576, 32_768, "o200k_base"),
  model("gpt-4.5-preview", "openai", 128_000, 16_384, "o200k_base"),
  model("gpt-4-turbo", "openai", 128_000, 4_096, "cl100k_base", {
    aliases: ["gpt-4-1106-preview", "gpt-4-0125-preview"],
  }),
  model("gpt-4", "openai", 8_192, 8_192, "cl100k_base"),
  model("gpt-3.5-turbo", "openai", 16_385, 4_096, "cl100k_base"),
  model("o1", "openai", 200_000, 100_000, "o200k_base"),
  model("o1-mini", "openai", 128_000, 65_536, "o200k_base"),
  model("o3", "openai", 200_000, 100_000, "o200k_base"),
  model("o3-mini", "openai", 200_000, 100_000, "o200k_base"),
  model("o4-mini", "openai", 200_000, 100_000, "o200k_base"),
  model("codex-mini", "openai", 200_000, 100_000, "o200k_base"),
  model("gpt-5", "openai", 400_000, 128_000, "o200k_base", GPT5_INPUT),
  model("gpt-5-mini", "openai", 400_000, 128_000, "o200k_base", GPT5_INPUT),
  model("gpt-5-nano", "openai", 400_000, 128_000, "o200k_base", GPT5_INPUT),
  model("gpt-5-chat", "openai", 128_000, 16_384, "o200k_base"),
  model("gpt-5.1", "openai", 400_000, 128_000, "o200k_base", GPT5_INPUT),
  model("gpt-5.1-chat", "openai", 128_000, 16_384, "o200k_base"),
  model("gpt-5.2", "openai", 400_000, 128_000, "o200k_base", GPT5_INPUT),
  model("gpt-5.2-chat", "openai", 128_000, 16_384, "o200k_base"),
  model("gpt-5.3-codex", "openai", 400_000, 128_000, "o200k_base", GPT5_INPUT),
  model("gpt-5.3-chat", "openai", 128_000, 16_384, "o200k_base"),
  model("gpt-5.4", "openai", 1_050_000, 128_000, "o200k_base"),
  model("gpt-5.4-mini", "openai", 400_000, 128_000, "o200k_base", GPT5_INPUT),
  model("gpt-5.4-nano", "openai", 400_000, 128_000, "o200k_base", GPT5_INPUT),
  model("gpt-5.5", "openai", 1_050_000, 128_000, "o200k_base"),
  model("gpt-oss-120b", "openai", 131_072, 131_072, "o200k_base"),
  model("gpt-oss-20b", "openai", 131_072, 131_072, "o200k_base"),
  // Anthropic
  model("claude-3-haiku", "anthropic", 200_000, 4_096, "claude"),
  model("claude-3-opus", "anthropic", 200_000, 4_096, "claude"),
  model("claude-3-5-haiku", "anthropic", 200_000, 8_192, "claude"),
  model("claude-3-5-sonnet", "anthropic", 200_000, 8_192, "claude"),
  model("claude-3-7-sonnet", "anthropic", 200_000, 64_000, "claude"),
  model("claude-sonnet-4", "anthropic", 200_000, 64_000, "claude", { aliases: ["claude-4-sonnet"] }),
  model("claude-opus-4", "anthropic", 200_000, 32_000, "claude", { aliases: ["claude-4-opus"] }),
  model("claude-opus-4-1", "anthropic", 200_000, 32_000, "claude"),
  model("claude-sonnet-4-5", "anthropic", 200_000, 64_000, "claude", { aliases: ["claude-4.5-sonnet"] }),
  model("claude-haiku-4-5", "anthropic", 200_000, 64_000, "claude", { aliases: ["claude-4.5-haiku"] }),
  model("claude-opus-4-5", "anthropic", 200_000, 64_000, "claude", { aliases: ["claude-4.5-opus"] }),
  model("claude-opus-4-6", "anthropic", 1_000_000, 128_000, "claude"),
  model("claude-sonnet-4-6", "anthropic", 1_000_000, 128_000, "claude"),
  model("claude-opus-4-7", "anthropic", 1_000_000, 128_000, "claude-2026"),
  model("claude-opus-4-8", "anthropic", 1_000_000, 128_000, "claude-2026"),
  model("claude-opus-5", "anthropic", 1_000_000, 128_000, "claude-2026"),
  model("claude-opus-5-5", "anthropic", 1_000_000, 128_000, "claude-2026"),
  model("claude-sonnet-5", "anthropic", 1_000_000, 128_000, "claude-2026"),
  model("claude-sonnet-5-5", "anthropic", 1_000_000, 128_000, "claude-2026"),
  model("claude-haiku-5-5", "anthropic", 1_000_000, 128_000, "claude-2026"),
  model("claude-fable-5-1", "anthropic", 1_000_000, 128_000, "claude-2026"),
  // Google
  model("gemini-1.5-pro", "google", 2_097_152, 8_192, "gemini"),
  model("gemini-1.5-flash", "google", M, 8_192, "gemini"),
  model("gemini-2.0-flash", "google", M, 8_192, "gemini"),
  model("gemini-2.5-pro", "google", M, 65_536, "gemini"),
  model("gemini-2.5-flash", "google", M, 65_536, "gemini"),
  model("gemini-2.5-flash-lite", "google", M, 65_536, "gemini"),
  model("gemini-3-pro", "google", M, 65_536, "gemini"),
  model("gemini-3-flash", "google", M, 65_536, "gemini"),
  model("gemini-3.1-pro", "google", M, 65_536, "gemini"),
  model("gemini-3.1-flash", "google", M, 65_536, "gemini"),
  // Open models (Ollama names; API names where they differ)
  model("llama3", "ollama", 8_192, 8_192, "llama"),
  model("llama3.1", "ollama", 131_072, 8_192, "llama", { aliases: ["llama-3.1"] }),
  model("llama3.2", "ollama", 131_072, 8_192, "llama", { aliases: ["llama-3.2"] }),
  model("llama3.3", "ollama", 131_072, 8_192, "llama", { aliases: ["llama-3.3"] }),
  model("qwen2.5", "ollama", 32_768, 8_192, "qwen", { aliases: ["qwen2.5-instruct"] }),
  model("qwen2.5-coder", "ollama", 32_768, 8_192, "qwen"),
  model("qwen3", "ollama", 40_960, 8_192, "qwen"),
  model("qwen3-coder", "ollama", 262_144, 65_536, "qwen"),
  model("mistral", "ollama", 32_768, 8_192, "mistral"),
  model("mistral-nemo", "ollama", 131_072, 8_192, "mistral"),
  model("mistral-small", "mistral", 131_072, 8_192, "mistral", {
    aliases: ["mistral-small3.1", "mistral-small3.2"],
  }),
  model("mistral-large", "mistral", 131_072, 8_192, "mistral"),
  model("mixtral", "ollama", 32_768, 8_192, "mistral"),
  model("codestral", "mistral", 262_144, 8_192, "mistral"),
  model("devstral", "mistral", 131_072, 8_192, "mistral"),
  model("deepseek-r1", "ollama", 131_072, 32_768, "deepseek"),
  model("deepseek-v3", "ollama", 131_072, 8_192, "deepseek"),
  model("deepseek-coder-v2", "ollama", 163_840, 8_192, "deepseek"),
  model("deepseek-chat", "deepseek", 131_072, 8_192, "deepseek"),
  model("deepseek-reasoner", "deepseek", 131_072, 65_536, "deepseek"),
  model("gemma3", "ollama", 131_072, 8_192, "gemini", { aliases: ["gemma-3"] }),
  model("gemma2", "ollama", 8_192, 8_192, "gemini", { aliases: ["gemma-2"] }),
  model("phi4", "ollama", 16_384, 4_096, "generic"),
]);

/** Families guessed from a name's stem when no entry matches, with a conservative window for each. */
export const FAMILY_DEFAULTS: readonly { readonly stem: string; readonly model: ModelInfo }[] = Object.freeze(
  [
    { stem: "claude", model: model("claude", "anthropic", 200_000, 64_000, "claude") },
    { stem: "gpt-3.5", model: model("gpt-3.5", "openai", 16_385, 4_096, "cl100k_base") },
    { stem: "gpt-4-", model: model("gpt-4", "openai", 128_000, 4_096, "cl100k_base") },
    { stem: "gpt", model: model("gpt", "openai", 128_000, 16_384, "o200k_base") },
    { stem: "o1", model: model("o1", "openai", 128_000, 32_768, "o200k_base") },
    { stem: "o3", model: model("o3", "openai", 128_000, 32_768, "o200k_base") },
    { stem: "o4", model: model("o4", "openai", 128_000, 32_768, "o200k_base") },
    { stem: "gemini", model: model("gemini", "google", M, 8_192, "gemini") },
    { stem: "gemma", model: model("gemma", "ollama", 8_192, 4_096, "gemini") },
    { stem: "llama", model: model("llama", "ollama", 8_192, 4_096, "llama") },
    { stem: "qwen", model: model("qwen", "ollama", 32_768, 8_192, "qwen") },
    { stem: "qwq", model: model("qwq", "ollama", 32_768, 8_192, "qwen") },
    { stem: "mistral", model: model("mistral", "mistral", 32_768, 8_192, "mistral") },
    { stem: "mixtral", model: model("mixtral", "mistral", 32_768, 8_192, "mistral") },
    { stem: "deepseek", model: model("deepseek", "deepseek", 65_536, 8_192, "deepseek") },
  ],
);

/** For a model nothing is known about: a small window, so a wrong guess errs on compacting early. */
export const UNKNOWN_MODEL: ModelInfo = model("unknown", "unknown", 32_768, 4_096, "generic");
