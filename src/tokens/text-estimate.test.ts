import { readFileSync } from "node:fs";
import fc from "fast-check";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { estimatorProfile } from "./estimator-profiles.ts";
import { estimateTextTokens } from "./text-estimate.ts";

const o200k = estimatorProfile("o200k_base").rates;
const codexRollout = new URL(
  "../../../shared/data/transcripts/codemie-code/codex/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
  import.meta.url,
);

/** Every distinct text the model saw in the Codex rollout (instructions, messages, tool calls, outputs). */
function rolloutTexts(): string[] {
  const texts = new Set<string>();
  for (const line of readFileSync(codexRollout, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    const record = JSON.parse(line) as { type: string; payload: Record<string, unknown> };
    const payload = record.payload;
    if (record.type !== "response_item") continue;
    for (const value of [payload["arguments"], payload["output"], payload["input"]]) {
      if (typeof value === "string") texts.add(value);
    }
    for (const part of (payload["content"] as { text?: string }[] | null | undefined) ?? []) {
      if (typeof part.text === "string") texts.add(part.text);
    }
  }
  return [...texts];
}

describe("estimateTextTokens", () => {
  it("costs nothing for empty text and about one token for a short word", () => {
    expect(estimateTextTokens("", o200k)).toBe(0);
    expect(Math.round(estimateTextTokens("hello", o200k))).toBe(1);
  });

  it("splits identifiers at case changes and charges long words more", () => {
    expect(estimateTextTokens("tokenCount", o200k)).toBeGreaterThan(estimateTextTokens("tokencount", o200k));
    expect(estimateTextTokens("internationalization", o200k)).toBeGreaterThan(
      estimateTextTokens("nation", o200k),
    );
  });

  it("charges CJK text per character and more than the same number of ASCII letters", () => {
    const chinese = "管理智能体的对话上下文很困难";
    expect(estimateTextTokens(chinese, o200k)).toBeGreaterThan(chinese.length * 0.5);
    expect(estimateTextTokens(chinese, o200k)).toBeGreaterThan(
      estimateTextTokens("a".repeat(chinese.length), o200k),
    );
  });

  it("counts numbers in groups of three for tiktoken families and per digit where numbers are split", () => {
    const gemini = estimatorProfile("gemini").rates;
    expect(estimateTextTokens("123456789", o200k)).toBeCloseTo(3 * o200k.digitGroup);
    expect(estimateTextTokens("123456789", gemini)).toBeCloseTo(9);
  });

  it("never decreases when text is appended (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.string({ unit: "binary" }), (head, tail) => {
        expect(estimateTextTokens(head + tail, o200k)).toBeGreaterThanOrEqual(
          estimateTextTokens(head, o200k),
        );
      }),
    );
  });

  it("is close to additive: joining two texts changes at most one run boundary (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), fc.string({ unit: "grapheme" }), (left, right) => {
        const joined = estimateTextTokens(left + right, o200k);
        expect(joined).toBeLessThanOrEqual(
          estimateTextTokens(left, o200k) + estimateTextTokens(right, o200k) + 1,
        );
      }),
    );
  });

  it("stays within 10% (median) and 5% (total) of exact o200k counts on a real Codex session", () => {
    const errors: number[] = [];
    let estimated = 0;
    let exact = 0;
    for (const text of rolloutTexts()) {
      const truth = countTokens(text, { disallowedSpecial: new Set() });
      if (truth < 50) continue;
      const estimate = estimateTextTokens(text, o200k);
      errors.push(Math.abs(estimate - truth) / truth);
      estimated += estimate;
      exact += truth;
    }
    errors.sort((a, b) => a - b);
    const median = errors[Math.floor(errors.length / 2)]!;
    console.log(
      `estimator vs o200k on the Codex rollout: ${errors.length} texts, median error ${(median * 100).toFixed(1)}%, total ${((estimated / exact - 1) * 100).toFixed(1)}%`,
    );
    expect(errors.length).toBeGreaterThan(50);
    expect(median).toBeLessThan(0.1);
    expect(Math.abs(estimated / exact - 1)).toBeLessThan(0.05);
  });
});
