import { describe, expect, it } from "vitest";
import type { Message } from "../model/message.ts";
import { HistoryBuilder } from "../test/history-builder.ts";
import { createEstimatingCounter } from "./estimating-counter.ts";

const [user, assistant, tool] = new HistoryBuilder()
  .user("Why does the build fail?")
  .step([
    { name: "bash", input: { command: "npm run build" }, output: "error TS2304: Cannot find name 'x'." },
  ])
  .build();

describe("createEstimatingCounter", () => {
  it("names itself after the family and the estimator version", () => {
    expect(createEstimatingCounter({ family: "claude" }).name).toBe("estimate:claude@1");
    expect(createEstimatingCounter().name).toBe("estimate:generic@1");
  });

  it("gives custom settings their own name, so cached counts are not mixed up", () => {
    const a = createEstimatingCounter({ family: "claude", costs: { perToolCall: 10 } });
    const b = createEstimatingCounter({ family: "claude", costs: { perToolCall: 20 } });
    expect(a.name).not.toBe(b.name);
    expect(a.name).toMatch(/^estimate:claude\+[0-9a-f]{8}@1$/);
  });

  it("adds the per-message, per-tool-call and per-tool-result framing to the text", () => {
    const counter = createEstimatingCounter({ family: "claude" });
    const { perMessage, perToolCall, perToolResult } = counter.profile.costs;
    const userText = (user!.content[0] as { text: string }).text;
    expect(counter.countMessage(user!)).toBe(
      Math.round(counter.profile.rates.word * 5 + counter.profile.rates.punctuation) + perMessage,
    );
    expect(counter.countMessage(assistant!)).toBeGreaterThan(perMessage + perToolCall);
    expect(counter.countMessage(tool!)).toBeGreaterThan(perMessage + perToolResult);
    expect(counter.countText(userText)).toBe(counter.countMessage(user!) - perMessage);
  });

  it("charges Claude more than o200k for the same text", () => {
    const claude = createEstimatingCounter({ family: "claude" });
    const openai = createEstimatingCounter({ family: "o200k_base" });
    const text = "function add(a: number, b: number): number {\n  return a + b;\n}\n".repeat(20);
    expect(claude.countText(text)).toBeGreaterThan(openai.countText(text) * 1.1);
  });

  it("does not count markers, which are never sent", () => {
    const marker: Message = { ...user!, kind: "marker", content: [{ type: "text", text: "compaction" }] };
    expect(createEstimatingCounter().countMessage(marker)).toBe(0);
  });

  it("counts images without a readable size at the default cost", () => {
    const counter = createEstimatingCounter({ family: "claude" });
    const withImage: Message = {
      ...user!,
      content: [{ type: "image", mediaType: "image/png", url: "https://example.com/screenshot.png" }],
    };
    expect(counter.countMessage(withImage)).toBe(counter.profile.costs.perMessage + 1_500);
  });

  it("weighs withheld reasoning by the reasoning tokens the provider reported", () => {
    const counter = createEstimatingCounter({ family: "o200k_base" });
    const reply: Message = {
      ...assistant!,
      content: [{ type: "reasoning", text: "", redacted: true, providerData: "gAAAA…" }],
      usage: { input: 1_000, output: 400, reasoning: 350 },
    };
    expect(counter.countMessage(reply)).toBe(counter.profile.costs.perMessage + 350);
  });
});
