import { describe, expect, it } from "vitest";
import { counterForModel, estimatorForModel } from "./counter-for-model.ts";
import { defaultModelRegistry } from "./model-registry.ts";

describe("counterForModel", () => {
  it("counts OpenAI models exactly with their encoding", async () => {
    expect((await counterForModel("openai:gpt-4.1-mini")).name).toBe("o200k_base");
    expect((await counterForModel("gpt-4-0613")).name).toBe("cl100k_base");
  });

  it("shares one exact counter per encoding, so what it remembers is bounded once per process", async () => {
    const [first, second] = await Promise.all([counterForModel("gpt-4.1"), counterForModel("openai:gpt-4o")]);
    expect(second).toBe(first);
    expect(await counterForModel("gpt-4-0613")).not.toBe(first);
  });

  it("estimates every other family, also when given model information", async () => {
    expect((await counterForModel("claude-sonnet-4-5-20250929")).name).toBe("estimate:claude@1");
    expect((await counterForModel(defaultModelRegistry.lookup("claude-opus-4-7"))).name).toBe(
      "estimate:claude-2026@1",
    );
    expect((await counterForModel("some-unknown-model")).name).toBe("estimate:generic@1");
  });

  it("follows a registry's overrides", async () => {
    const registry = defaultModelRegistry.with({
      id: "house-model",
      contextWindow: 8_000,
      tokenizer: "o200k_base",
    });
    expect((await counterForModel("house-model", registry)).name).toBe("o200k_base");
  });
});

describe("estimatorForModel", () => {
  it("returns a synchronous estimator, also for OpenAI models", () => {
    expect(estimatorForModel("qwen2.5-coder:7b").name).toBe("estimate:qwen@1");
    expect(estimatorForModel("gpt-4o").name).toBe("estimate:o200k_base@1");
  });
});
