import { describe, expect, it } from "vitest";
import { anthropicMinimumCacheableTokens } from "./cache-minimums.ts";

describe("anthropicMinimumCacheableTokens", () => {
  it.each([
    ["claude-sonnet-4-5-20250929", 1_024],
    ["claude-sonnet-4-6", 1_024],
    ["claude-opus-4-1-20250805", 1_024],
    ["claude-opus-4-20250514", 1_024],
    ["claude-opus-4-5-20251101", 4_096],
    ["claude-opus-4-6", 4_096],
    ["claude-opus-4-7", 4_096],
    ["claude-opus-4-8", 1_024],
    ["claude-haiku-4-5-20251001", 4_096],
    ["anthropic/claude-haiku-4.5", 4_096],
    ["claude-3-5-haiku-20241022", 2_048],
    ["us.anthropic.claude-3-haiku-20240307-v1:0", 2_048],
    ["claude-3-7-sonnet-20250219", 1_024],
    ["a-model-from-the-future", 1_024],
  ])("%s → %i tokens", (model, expected) => {
    expect(anthropicMinimumCacheableTokens(model)).toBe(expected);
  });
});
