import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../errors/errors.ts";
import type { Message } from "../../../model/message.ts";
import { buildMessages } from "../message-builder.ts";
import {
  fixedImportOptions,
  historyArbitrary,
  sampleHistory,
  signedReasoning,
  signedBy,
  storedForm,
  withoutMarkers,
} from "../test-support/index.ts";
import type { AnthropicPayload } from "./anthropic-message.ts";
import { fromAnthropic } from "./from-anthropic.ts";
import { toAnthropic } from "./to-anthropic.ts";

const signed = [
  { type: "reasoning", text: "Check the build first.", signature: "RXVnQ2lnRUFTRkE=" },
  { type: "reasoning", text: "", redacted: true, signature: "RW5jcnlwdGVkVGhpbmtpbmc=" },
] as const;

function roundTrip(messages: readonly Message[]): Message[] {
  return fromAnthropic(toAnthropic(messages), fixedImportOptions());
}

describe("Anthropic", () => {
  it("round-trips a history with every feature, dropping only the marker", () => {
    const history = sampleHistory({ reasoning: signed });
    expect(roundTrip(history)).toEqual(signedBy(withoutMarkers(history), "anthropic"));
  });

  it("keeps a system message sent inside messages (as Claude Code does) at its place, byte for byte", () => {
    const payload = {
      system: "You are a coding agent.",
      messages: [
        { role: "user", content: [{ type: "text", text: "Fix the build." }] },
        { role: "system", content: [{ type: "text", text: "# Environment\nPrimary working directory: /w" }] },
        { role: "assistant", content: [{ type: "text", text: "On it." }] },
        { role: "system", content: "Plan mode is off." },
        { role: "user", content: "Go on." },
      ],
    };
    const messages = fromAnthropic(payload, fixedImportOptions());
    expect(messages.map((message) => message.role)).toEqual([
      "system",
      "user",
      "system",
      "assistant",
      "system",
      "user",
    ]);
    expect(JSON.stringify(toAnthropic(messages))).toBe(JSON.stringify(payload));
  });

  it("merges consecutive tool messages into one user message with is_error and attachments", () => {
    const { system, messages } = toAnthropic(sampleHistory({ reasoning: signed }));
    expect(system).toBe("You are a careful coding agent.");
    expect(messages.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "user",
      "assistant",
    ]);
    expect(messages[2]).toEqual({
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "call_build",
          content: "src/app.ts(3,1): error TS2304: Cannot find name 'x'.",
          is_error: true,
        },
        {
          type: "tool_result",
          tool_use_id: "call_page",
          content: [
            { type: "text", text: '{"status":200,"title":"Home","links":["/a","/b"]}' },
            { type: "image", source: { type: "base64", media_type: "image/png", data: expect.any(String) } },
          ],
        },
      ],
    });
    expect(messages[1]!.content.slice(0, 2)).toEqual([
      { type: "thinking", thinking: "Check the build first.", signature: "RXVnQ2lnRUFTRkE=" },
      { type: "redacted_thinking", data: "RW5jcnlwdGVkVGhpbmtpbmc=" },
    ]);
  });

  it("splits one user message holding two tool results and text, and builds it back identically", () => {
    const payload: AnthropicPayload = {
      system: [
        { type: "text", text: "You are Claude Code." },
        { type: "text", text: "Project rules: keep diffs small." },
      ],
      messages: [
        { role: "user", content: "Why does the test fail?" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "Read the test and the source.", signature: "EqQBCkYIBxgCKkA" },
            { type: "text", text: "Reading both files." },
            { type: "tool_use", id: "toolu_01A", name: "Read", input: { file_path: "/repo/src/sum.ts" } },
            {
              type: "tool_use",
              id: "toolu_01B",
              name: "Read",
              input: { file_path: "/repo/src/sum.test.ts" },
            },
          ],
        },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "toolu_01A",
              content: "     1→export const sum = (a, b) => a - b;",
            },
            {
              type: "tool_result",
              tool_use_id: "toolu_01B",
              content: [{ type: "text", text: "File does not exist." }],
              is_error: true,
            },
            { type: "text", text: "Also look at the CI log." },
            { type: "image", source: { type: "url", url: "https://ci.example.com/run/42/screenshot.png" } },
          ],
        },
        {
          role: "assistant",
          content: [{ type: "text", text: "sum subtracts instead of adding." }],
        },
      ],
    };
    const messages = fromAnthropic(payload, fixedImportOptions());
    expect(messages.map((message) => message.role)).toEqual([
      "system",
      "user",
      "assistant",
      "tool",
      "tool",
      "user",
      "assistant",
    ]);
    expect(messages.map((message) => message.turn)).toEqual([0, 1, 1, 1, 1, 2, 2]);
    expect(messages[4]!.content[0]).toEqual({
      type: "tool-result",
      callId: "toolu_01B",
      toolName: "Read",
      content: "File does not exist.",
      isError: true,
    });
    expect(toAnthropic(messages)).toEqual(payload);
  });

  it("keeps the order of text and media inside a tool result, through ctxkit and its store", () => {
    const shot = { type: "image" as const, source: { type: "url" as const, url: "https://x.test/shot.png" } };
    const call = (id: string) => ({ type: "tool_use" as const, id, name: "Screenshot", input: {} });
    const payload: AnthropicPayload = {
      messages: [
        { role: "user", content: "Take screenshots." },
        { role: "assistant", content: [call("t1"), call("t2"), call("t3")] },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "t1", content: [shot, { type: "text", text: "the page" }] },
            {
              type: "tool_result",
              tool_use_id: "t2",
              content: [
                { type: "text", text: "before" },
                shot,
                { type: "tool_reference", tool_name: "Browser" },
                { type: "text", text: "after" },
                shot,
              ],
            },
            { type: "tool_result", tool_use_id: "t3", content: [shot, shot] },
          ],
        },
      ],
    };
    const messages = fromAnthropic(payload, fixedImportOptions());
    expect(messages[2]!.content[0]).toMatchObject({ content: "the page", attachments: [{ type: "image" }] });
    expect(toAnthropic(messages)).toEqual(payload);
    expect(toAnthropic(storedForm(messages))).toEqual(payload);
  });

  it("sends a lone user text back in the form it came in: a list stays a list, a string a string", () => {
    const payload: AnthropicPayload = {
      messages: [
        { role: "user", content: [{ type: "text", text: "[Request interrupted by user]" }] },
        { role: "assistant", content: [{ type: "text", text: "Stopped." }] },
        { role: "user", content: "Go on." },
      ],
    };
    const messages = fromAnthropic(payload, fixedImportOptions());
    expect(messages[0]!.content).toEqual([{ type: "text", text: "[Request interrupted by user]" }]);
    expect(toAnthropic(messages)).toEqual(payload);
  });

  it("leaves out reasoning without a signature, which Anthropic would reject", () => {
    const [message] = buildMessages(
      [
        {
          role: "assistant",
          content: [
            { type: "reasoning", text: "unsigned" },
            { type: "text", text: "hi" },
          ],
        },
      ],
      fixedImportOptions(),
    );
    expect(toAnthropic([message!]).messages[0]!.content).toEqual([{ type: "text", text: "hi" }]);
  });

  it("leaves out empty text and a reply left empty, merging the user messages around it", () => {
    const messages = buildMessages(
      [
        { role: "user", content: [{ type: "text", text: "first" }] },
        { role: "assistant", content: [{ type: "text", text: "" }] },
        { role: "user", content: [{ type: "text", text: "second" }] },
        {
          role: "assistant",
          content: [
            { type: "text", text: "" },
            { type: "tool-call", id: "c1", name: "ls", input: {} },
          ],
        },
        { role: "tool", content: [{ type: "tool-result", callId: "c1", toolName: "ls", content: "a.ts" }] },
        { role: "assistant", content: [] },
      ],
      fixedImportOptions(),
    );
    expect(toAnthropic(messages).messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "first" },
          { type: "text", text: "second" },
        ],
      },
      { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "ls", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "c1", content: "a.ts" }] },
    ]);
  });

  it("sends a plain-text file as a text document and reads it back", () => {
    const data = Buffer.from("line one\nline two", "utf8").toString("base64");
    const [message] = buildMessages(
      [{ role: "user", content: [{ type: "file", mediaType: "text/plain", data, filename: "notes.txt" }] }],
      fixedImportOptions(),
    );
    const payload = toAnthropic([message!]);
    expect(payload.messages[0]!.content).toEqual([
      {
        type: "document",
        source: { type: "text", media_type: "text/plain", data: "line one\nline two" },
        title: "notes.txt",
      },
    ]);
    expect(fromAnthropic(payload, fixedImportOptions())).toEqual([message]);
  });

  it("rejects bad input with a ValidationError naming the index and field", () => {
    const bad = {
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: [{ type: "tool_use", id: "t", name: "f" }] },
      ],
    };
    expect(() => fromAnthropic(bad)).toThrow(ValidationError);
    expect(() => fromAnthropic(bad)).toThrow(/payload\.messages\[1\]\.content\[0\]\.input/);
  });

  it("round-trips random valid histories", () => {
    fc.assert(
      fc.property(historyArbitrary({ reasoning: signedReasoning }), (history) => {
        expect(roundTrip(history)).toEqual(signedBy(history, "anthropic"));
      }),
      { numRuns: 150 },
    );
  });
});
