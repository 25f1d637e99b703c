import { describe, expect, it } from "vitest";
import type { Message } from "../model/message.ts";
import { HistoryBuilder } from "../test/history-builder.ts";
import { createExactCounter } from "./exact-counter.ts";

describe("createExactCounter", () => {
  it("counts o200k_base text exactly, treating special-token text as ordinary text", async () => {
    const counter = await createExactCounter("o200k_base");
    expect(counter.name).toBe("o200k_base");
    expect(counter.countText("hello world")).toBe(2);
    expect(counter.countText("")).toBe(0);
    expect(counter.countText("a <|endoftext|> b")).toBeGreaterThan(3);
  });

  it("adds OpenAI's chat framing: 4 per message, and the tool-call and tool-result overheads", async () => {
    const counter = await createExactCounter("o200k_base");
    const [user, assistant, tool] = new HistoryBuilder()
      .user("hello world")
      .step([{ name: "read_file", input: { path: "a.ts" }, output: "export {}" }])
      .build();
    expect(counter.countMessage(user!)).toBe(2 + 4);
    const argumentsTokens = counter.countText('{"path":"a.ts"}') + counter.countText("read_file");
    expect(counter.countMessage(assistant!)).toBe(4 + 10 + argumentsTokens);
    expect(counter.countMessage(tool!)).toBe(4 + 8 + counter.countText("export {}"));
  });

  it("distinguishes cl100k_base, which needs more tokens outside English", async () => {
    const [o200k, cl100k] = await Promise.all([
      createExactCounter("o200k_base"),
      createExactCounter("cl100k_base"),
    ]);
    const russian = "Управление контекстом агента сложно";
    expect(cl100k.name).toBe("cl100k_base");
    expect(cl100k.countText(russian)).toBeGreaterThan(o200k.countText(russian));
  });

  it("returns counters that share one loaded encoding", async () => {
    const [first, second] = await Promise.all([
      createExactCounter("o200k_base"),
      createExactCounter("o200k_base"),
    ]);
    const message: Message = new HistoryBuilder().user("the same text, counted twice").build()[0]!;
    expect(first.countMessage(message)).toBe(second.countMessage(message));
  });
});
