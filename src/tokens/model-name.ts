/** A model string taken apart: the provider named in it (if any) and the bare, lower-case model name. */
export interface ParsedModelName {
  readonly provider: string | undefined;
  readonly name: string;
}

/** Prefixes recognised as a provider in `provider:model` strings (Ollama uses `:` for tags, `llama3.1:8b`). */
const PROVIDERS = new Set([
  "openai",
  "anthropic",
  "google",
  "gemini",
  "vertex",
  "bedrock",
  "azure",
  "ollama",
  "mistral",
  "deepseek",
  "groq",
  "openrouter",
  "together",
  "fireworks",
  "xai",
  "lmstudio",
  "openai-compatible",
]);

/**
 * Splits a model string as users write it: `provider:model`, `provider/model` (gateways), `models/…`
 * (Gemini), Bedrock ids (`us.anthropic.claude-sonnet-4-20250514-v1:0`), Vertex ids (`claude-sonnet-4-5@20250929`)
 * and Hugging Face paths (`meta-llama/Llama-3.1-8B-Instruct`).
 *
 * @example
 * parseModelName("anthropic:claude-sonnet-4-5-20250929"); // { provider: "anthropic", name: "claude-sonnet-4-5-20250929" }
 * parseModelName("ollama:llama3.1:8b"); // { provider: "ollama", name: "llama3.1:8b" }
 */
export function parseModelName(model: string): ParsedModelName {
  let name = model.trim().toLowerCase();
  let provider: string | undefined;
  const colon = name.indexOf(":");
  if (colon > 0 && PROVIDERS.has(name.slice(0, colon))) {
    provider = name.slice(0, colon);
    name = name.slice(colon + 1);
  }
  const slash = name.lastIndexOf("/");
  if (slash !== -1) {
    const owner = name.slice(0, name.indexOf("/"));
    if (provider === undefined && PROVIDERS.has(owner)) provider = owner;
    name = name.slice(slash + 1);
  }
  const bedrock = name.indexOf("anthropic.");
  if (bedrock !== -1) {
    provider ??= "bedrock";
    name = name.slice(bedrock + "anthropic.".length).replace(/-v\d+(:\d+)?$/, "");
  }
  const at = name.indexOf("@");
  if (at > 0) name = name.slice(0, at);
  return { provider, name };
}
