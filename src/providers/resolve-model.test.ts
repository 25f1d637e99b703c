import { describe, expect, it } from "vitest";
import { ConfigError } from "../errors/errors.ts";
import { formatModelSpec, parseModelSpec } from "./model-spec.ts";
import { resolveConfiguredModels } from "./resolve-configured-models.ts";
import { resolveModel } from "./resolve-model.ts";

const keys = {
  OPENAI_API_KEY: "sk-test",
  ANTHROPIC_API_KEY: "sk-ant-test",
  GEMINI_API_KEY: "gemini-test",
  OPENROUTER_API_KEY: "or-test",
};

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

async function rejection(promise: Promise<unknown>): Promise<ConfigError> {
  const error: unknown = await promise.then(
    () => new Error("expected a rejection"),
    (reason: unknown) => reason,
  );
  if (error instanceof ConfigError) return error;
  throw error as Error;
}

describe("parseModelSpec", () => {
  it("splits on the first colon so Ollama tags survive", () => {
    expect(parseModelSpec("ollama:llama3.1:8b")).toEqual({ provider: "ollama", modelId: "llama3.1:8b" });
  });

  it("takes a trailing @URL as the base URL but keeps other @ in the model id", () => {
    expect(parseModelSpec("openai-compatible:qwen3@http://127.0.0.1:8000/v1")).toEqual({
      provider: "openai-compatible",
      modelId: "qwen3",
      baseURL: "http://127.0.0.1:8000/v1",
    });
    expect(parseModelSpec("anthropic:claude-3-5-sonnet@20240620").modelId).toBe("claude-3-5-sonnet@20240620");
  });

  it("accepts aliases and round-trips through formatModelSpec", () => {
    const spec = parseModelSpec("Gemini:gemini-2.5-flash");
    expect(spec.provider).toBe("google");
    expect(parseModelSpec(formatModelSpec(spec))).toEqual(spec);
  });

  it("names the setting and the allowed providers when the string is wrong", () => {
    const noProvider = configError(() => parseModelSpec("gpt-4o", "summarizationModel"));
    expect(noProvider.key).toBe("summarizationModel");
    expect(noProvider.message).toMatch(/provider:model/);
    const unknown = configError(() => parseModelSpec("mistral:large"));
    expect(unknown.message).toContain("openai, anthropic, google, openai-compatible, ollama");
    expect(configError(() => parseModelSpec("openai:")).message).toMatch(/names no model/);
  });
});

describe("resolveModel", () => {
  it.each([
    ["openai:gpt-4.1-mini", "openai.responses", "gpt-4.1-mini"],
    ["anthropic:claude-sonnet-4-5", "anthropic.messages", "claude-sonnet-4-5"],
    ["google:gemini-2.5-flash", "google.generative-ai", "gemini-2.5-flash"],
    ["gemini:gemini-2.5-pro", "google.generative-ai", "gemini-2.5-pro"],
    ["ollama:llama3.1:8b", "ollama.chat", "llama3.1:8b"],
    ["lmstudio:qwen3-8b", "lmstudio.chat", "qwen3-8b"],
    ["vllm:meta-llama/Llama-3.1-8B", "vllm.chat", "meta-llama/Llama-3.1-8B"],
    ["llamacpp:local", "llamacpp.chat", "local"],
    ["openrouter:anthropic/claude-sonnet-4.5", "openrouter.chat", "anthropic/claude-sonnet-4.5"],
    ["openai-compatible:test@http://127.0.0.1:9/v1", "openai-compatible.chat", "test"],
  ])("%s resolves to a %s model", async (spec, provider, modelId) => {
    const model = await resolveModel(spec, { env: keys });
    expect(model.specificationVersion).toBe("v4");
    expect(model.provider).toBe(provider);
    expect(model.modelId).toBe(modelId);
  });

  it.each([
    ["openai:gpt-4.1", "OPENAI_API_KEY", "apiKeys.openai"],
    ["anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY", "apiKeys.anthropic"],
    ["google:gemini-2.5-flash", "GOOGLE_GENERATIVE_AI_API_KEY or GEMINI_API_KEY", "apiKeys.google"],
    ["openrouter:x/y", "OPENROUTER_API_KEY", "apiKeys.openrouter"],
  ])("%s without a key says to set %s", async (spec, variables, key) => {
    const error = await rejection(resolveModel(spec, { env: {} }));
    expect(error.key).toBe(key);
    expect(error.message).toContain(`set ${variables}`);
  });

  it("uses a key from the apiKeys settings when the environment has none", async () => {
    const model = await resolveModel("anthropic:claude-haiku-4-5", {
      env: {},
      apiKeys: { anthropic: "stored" },
    });
    expect(model.provider).toBe("anthropic.messages");
  });

  it("needs no key for local servers", async () => {
    const model = await resolveModel("ollama:llama3.1", { env: {} });
    expect(model.provider).toBe("ollama.chat");
  });

  it("requires a base URL for openai-compatible and reads it from the option or CTXKIT_BASE_URL", async () => {
    const missing = await rejection(resolveModel("openai-compatible:qwen", { env: {} }));
    expect(missing.key).toBe("baseURL");
    expect(missing.message).toContain("CTXKIT_BASE_URL");
    const fromOption = await resolveModel("openai-compatible:qwen", {
      env: {},
      baseURL: "http://127.0.0.1:1/v1",
    });
    const fromEnv = await resolveModel("openai-compatible:qwen", {
      env: { CTXKIT_BASE_URL: "http://127.0.0.1:2/v1" },
    });
    expect([fromOption.modelId, fromEnv.modelId]).toEqual(["qwen", "qwen"]);
  });

  it("rejects a base URL that is not http(s)", async () => {
    const error = await rejection(resolveModel("openai-compatible:qwen@http://", { env: {} }));
    expect(error.message).toMatch(/base URL|http\(s\) URL/);
    const wrongScheme = await rejection(resolveModel("vllm:x", { env: {}, baseURL: "ftp://host/v1" }));
    expect(wrongScheme.message).toContain("is not an http(s) URL");
  });
});

describe("resolveConfiguredModels", () => {
  it("falls back to the primary model when no summarization model is set", async () => {
    const models = await resolveConfiguredModels({ model: "ollama:llama3.1" }, { env: {} });
    expect(models.summarizationModel).toBe(models.model);
  });

  it("resolves a separate summarization model the same way", async () => {
    const models = await resolveConfiguredModels(
      { model: "anthropic:claude-sonnet-4-5", summarizationModel: "openai:gpt-4.1-nano" },
      { env: keys },
    );
    expect([models.model.provider, models.summarizationModel.provider]).toEqual([
      "anthropic.messages",
      "openai.responses",
    ]);
  });

  it("names the summarizationModel setting when its provider key is missing", async () => {
    const error = await rejection(
      resolveConfiguredModels({ model: "ollama:llama3.1", summarizationModel: "bogus" }, { env: {} }),
    );
    expect(error.key).toBe("summarizationModel");
  });

  it("says how to configure a model when none is set", async () => {
    const error = await rejection(resolveConfiguredModels({}, { env: {} }));
    expect(error.key).toBe("model");
    expect(error.message).toContain("CTXKIT_MODEL");
  });
});
