import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../errors/errors.ts";
import { reservedOutputTokens, usableWindow } from "./model-info.ts";
import { parseModelName } from "./model-name.ts";
import { defaultModelRegistry, ModelRegistry } from "./model-registry.ts";

describe("parseModelName", () => {
  it("takes provider prefixes, gateway paths, Bedrock and Vertex ids apart", () => {
    expect(parseModelName("anthropic:claude-sonnet-4-5")).toEqual({
      provider: "anthropic",
      name: "claude-sonnet-4-5",
    });
    expect(parseModelName("ollama:llama3.1:8b")).toEqual({ provider: "ollama", name: "llama3.1:8b" });
    expect(parseModelName("llama3.1:8b")).toEqual({ provider: undefined, name: "llama3.1:8b" });
    expect(parseModelName("openai/gpt-4o")).toEqual({ provider: "openai", name: "gpt-4o" });
    expect(parseModelName("models/gemini-2.5-pro").name).toBe("gemini-2.5-pro");
    expect(parseModelName("us.anthropic.claude-sonnet-4-20250514-v1:0")).toEqual({
      provider: "bedrock",
      name: "claude-sonnet-4-20250514",
    });
    expect(parseModelName("claude-sonnet-4-5@20250929").name).toBe("claude-sonnet-4-5");
  });
});

describe("ModelRegistry.lookup", () => {
  const lookup = (model: string) => defaultModelRegistry.lookup(model);

  it("finds models by id, alias and dated snapshot", () => {
    expect(lookup("gpt-4.1")).toMatchObject({ id: "gpt-4.1", match: "exact", tokenizer: "o200k_base" });
    expect(lookup("chatgpt-4o-latest")).toMatchObject({ id: "gpt-4o", match: "alias" });
    expect(lookup("claude-sonnet-4-5-20250929")).toMatchObject({ id: "claude-sonnet-4-5", match: "prefix" });
    expect(lookup("claude-opus-4-1-20250805").id).toBe("claude-opus-4-1");
    expect(lookup("claude-opus-4-20250514").id).toBe("claude-opus-4");
    expect(lookup("gpt-4o-mini-2024-07-18").id).toBe("gpt-4o-mini");
    expect(lookup("gemini-2.5-pro-preview-06-05").id).toBe("gemini-2.5-pro");
    expect(lookup("o3-mini").id).toBe("o3-mini");
  });

  it("finds local models by their Ollama tags and gateway paths", () => {
    expect(lookup("ollama:qwen2.5-coder:7b")).toMatchObject({ id: "qwen2.5-coder", tokenizer: "qwen" });
    expect(lookup("deepseek-r1:14b").tokenizer).toBe("deepseek");
    expect(lookup("meta-llama/Llama-3.1-8B-Instruct").id).toBe("llama3.1");
    expect(lookup("gemma3:27b").tokenizer).toBe("gemini");
  });

  it("does not take a longer name for a shorter one without a boundary", () => {
    expect(lookup("gpt-4o").id).toBe("gpt-4o");
    expect(lookup("gpt-4-0613")).toMatchObject({ id: "gpt-4", contextWindow: 8_192 });
  });

  it("guesses the family of unknown models and falls back to a small generic default", () => {
    expect(lookup("claude-zeta-9")).toMatchObject({
      match: "family",
      tokenizer: "claude",
      id: "claude-zeta-9",
    });
    expect(lookup("hermes-3-llama-3.1-8b")).toMatchObject({ match: "family", tokenizer: "llama" });
    expect(lookup("my-private-model")).toMatchObject({
      match: "default",
      tokenizer: "generic",
      contextWindow: 32_768,
    });
    expect(defaultModelRegistry.find("my-private-model")).toBeUndefined();
  });

  it("never fails and always gives a positive window and output (property)", () => {
    fc.assert(
      fc.property(fc.string(), (model) => {
        const resolved = lookup(model);
        expect(resolved.contextWindow).toBeGreaterThan(0);
        expect(resolved.maxOutputTokens).toBeGreaterThan(0);
        expect(usableWindow(resolved)).toBeGreaterThan(0);
      }),
    );
  });
});

describe("usableWindow", () => {
  it("reserves min(20k, max output) and respects a separate input cap", () => {
    expect(usableWindow(defaultModelRegistry.lookup("claude-sonnet-4-5"))).toBe(180_000);
    expect(usableWindow(defaultModelRegistry.lookup("gpt-4o"))).toBe(128_000 - 16_384);
    expect(usableWindow(defaultModelRegistry.lookup("gpt-5"))).toBe(272_000);
  });

  it("never reserves more than a quarter of a small window", () => {
    expect(reservedOutputTokens({ contextWindow: 8_192, maxOutputTokens: 8_192 })).toBe(2_048);
    expect(reservedOutputTokens({ contextWindow: 200_000, maxOutputTokens: 64_000 })).toBe(20_000);
  });
});

describe("ModelRegistry.with", () => {
  it("overrides one model in a new registry and leaves the original alone", () => {
    const local = defaultModelRegistry.with({ id: "ollama:llama3.1", contextWindow: 16_384 });
    expect(local.lookup("llama3.1:8b").contextWindow).toBe(16_384);
    expect(defaultModelRegistry.lookup("llama3.1:8b").contextWindow).toBe(131_072);
  });

  it("can override a single tag, and adds new models with defaults guessed from the name", () => {
    const registry = new ModelRegistry().with(
      { id: "qwen3:32b", contextWindow: 32_768 },
      { id: "acme-coder", contextWindow: 64_000, maxOutputTokens: 8_000, aliases: ["acme"] },
    );
    expect(registry.lookup("qwen3:32b")).toMatchObject({
      contextWindow: 32_768,
      tokenizer: "qwen",
      match: "exact",
    });
    expect(registry.lookup("qwen3:8b").contextWindow).toBe(40_960);
    expect(registry.lookup("acme")).toMatchObject({ id: "acme-coder", match: "alias", tokenizer: "generic" });
  });

  it("rejects a new model without a window, and invalid numbers, with a ValidationError", () => {
    expect(() => defaultModelRegistry.with({ id: "brand-new" })).toThrow(ValidationError);
    expect(() => defaultModelRegistry.with({ id: "gpt-4o", contextWindow: -5 })).toThrow(/contextWindow/);
  });
});
