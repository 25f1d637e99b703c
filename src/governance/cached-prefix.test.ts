import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Message } from "../model/message.ts";
import { HistoryBuilder } from "../test/history-builder.ts";
import { AppendOnlyCacheAnchor, cacheAnchor } from "./cached-prefix.ts";
import { MIN_OFFLOAD_TOKENS } from "./processors/tool-output-offload.ts";

/** One token per four characters of the message's text, as a rough counter would have it. */
const tokensOf = (message: Message) => Math.ceil(JSON.stringify(message.content).length / 4);
const output = (tokens: number) => "x".repeat(tokens * 4);

describe("cacheAnchor", () => {
  it("sits before the first output a checkpoint could shorten, past small outputs no processor changes", () => {
    const view = new HistoryBuilder()
      .user("Build it")
      .step([{ name: "bash", input: { command: "ls" }, output: output(MIN_OFFLOAD_TOKENS / 4) }])
      .step([{ name: "bash", input: { command: "pwd" }, output: "/repo" }])
      .step([{ name: "read_file", input: { path: "a.ts" }, output: output(MIN_OFFLOAD_TOKENS * 3) }])
      .reply("Done.")
      .build();
    // Messages 2 and 4 are small outputs that offloading leaves as they are; 6 is the first it could shorten.
    expect(cacheAnchor(view, 250, tokensOf)).toBe(5);
  });

  it("counts a small output with a compact summary as changeable: the summary replaces it later", () => {
    const view = new HistoryBuilder()
      .user("Build it")
      .message({
        role: "assistant",
        content: [{ type: "tool-call", id: "c1", name: "bash", input: { command: "ls" } }],
      })
      .message({
        role: "tool",
        content: [
          { type: "tool-result", callId: "c1", toolName: "bash", content: "a\nb", compactSummary: "2 files" },
        ],
      })
      .step([{ name: "read_file", input: { path: "a.ts" }, output: output(MIN_OFFLOAD_TOKENS * 3) }])
      .build();
    expect(cacheAnchor(view, 250, tokensOf)).toBe(1);
  });

  it("is undefined when nothing could change, or the first message could", () => {
    const settled = new HistoryBuilder()
      .user("Hi")
      .step([{ name: "bash", input: { command: "pwd" }, output: "/repo" }])
      .reply("Hello")
      .build();
    expect(cacheAnchor(settled, 250, tokensOf)).toBeUndefined();
  });
});

describe("AppendOnlyCacheAnchor", () => {
  /** A message of one of the kinds the anchor looks at: small or large outputs, offloaded ones, writes, summaries. */
  const message = (kind: number, seq: number): Message => {
    const base = { id: `m${seq}`, sessionId: "s", seq, turn: 1, createdAt: "2026-01-01T00:00:00.000Z" };
    const result = (content: string, offloadRef?: string) => ({
      ...base,
      role: "tool" as const,
      content: [{ type: "tool-result" as const, callId: `c${seq}`, toolName: "bash", content, offloadRef }],
    });
    switch (kind) {
      case 0:
        return { ...base, role: "user", content: [{ type: "text", text: "go on" }] };
      case 1:
        return result("small");
      case 2:
        return result(output(MIN_OFFLOAD_TOKENS * 2));
      case 3:
        return result(output(MIN_OFFLOAD_TOKENS * 2), "blob:x");
      case 4:
        return {
          ...base,
          role: "assistant",
          content: [
            {
              type: "tool-call",
              id: `c${seq}`,
              name: "Write",
              input: { file_path: "a.ts", content: output(400) },
            },
          ],
        };
      default:
        return { ...base, role: "assistant", kind: "summary", content: [{ type: "text", text: "summary" }] };
    }
  };

  it("finds what cacheAnchor finds on a list growing at its end, and on any other list given", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 30 }),
        fc.array(fc.integer({ min: 0, max: 30 }), { maxLength: 5 }),
        (kinds, copies) => {
          const anchors = new AppendOnlyCacheAnchor();
          const list: Message[] = [];
          for (const [seq, kind] of kinds.entries()) {
            list.push(message(kind, seq));
            const given = copies.includes(seq) ? [...list] : list;
            expect(anchors.anchor(given, 250, tokensOf)).toBe(cacheAnchor(given, 250, tokensOf));
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
