import { describe, expect, it } from "vitest";
import { ParseError } from "../../errors/errors.ts";
import type { Message } from "../../model/message.ts";
import { fromAnthropic, toAnthropic } from "../providers/anthropic/index.ts";
import { importClaudeCode } from "./claude-code-importer.ts";

type Fields = { [key: string]: unknown };

let clock = 0;
function line(fields: Fields): Fields {
  clock++;
  return {
    sessionId: "s1",
    isSidechain: false,
    timestamp: `2026-01-01T00:00:${String(clock).padStart(2, "0")}.000Z`,
    ...fields,
  };
}
function user(uuid: string, parentUuid: string | null, content: unknown, extra: Fields = {}): Fields {
  return line({ type: "user", uuid, parentUuid, message: { role: "user", content }, ...extra });
}
function assistant(
  uuid: string,
  parentUuid: string,
  id: string,
  block: Fields,
  usage = { input_tokens: 3, output_tokens: 7 },
): Fields {
  return line({
    type: "assistant",
    uuid,
    parentUuid,
    message: { id, role: "assistant", model: "claude-test", content: [block], usage },
  });
}
const toolUse = (id: string, name = "Bash") => ({ type: "tool_use", id, name, input: { command: id } });
const toolResult = (id: string, content: unknown = `out ${id}`) => ({
  type: "tool_result",
  tool_use_id: id,
  content,
});
const jsonl = (records: Fields[]) => records.map((record) => JSON.stringify(record)).join("\n");
const importOne = (records: Fields[]) => importClaudeCode(jsonl(records), "test.jsonl")[0]!;
const shape = (messages: readonly Message[]) =>
  messages.map(
    (message) =>
      `${message.role}:${message.content.map((block) => (block.type === "text" ? block.text : block.type)).join("+")}`,
  );

describe("importClaudeCode on constructed sessions", () => {
  it("keeps the active branch after a rewind and drops the abandoned prompt", () => {
    const conversation = importOne([
      user("u1", null, "first"),
      assistant("a1", "u1", "m1", { type: "text", text: "reply one" }),
      user("u2", "a1", "abandoned prompt"),
      assistant("a2", "u2", "m2", { type: "text", text: "abandoned reply" }),
      user("u3", "a1", "rewritten prompt"),
      assistant("a3", "u3", "m3", { type: "text", text: "kept reply" }),
    ]);
    expect(shape(conversation.messages)).toEqual([
      "user:first",
      "assistant:reply one",
      "user:rewritten prompt",
      "assistant:kept reply",
    ]);
    expect(conversation.messages.map((message) => message.turn)).toEqual([1, 1, 2, 2]);
  });

  it("merges the lines of one response and keeps parallel tool calls that fork the tree", () => {
    // Claude Code hangs each result under its own tool_use line: t1's result is off the parent chain.
    const conversation = importOne([
      user("u1", null, "run both"),
      assistant("a1", "u1", "m1", { type: "thinking", thinking: "plan", signature: "sig" }),
      assistant("a2", "a1", "m1", toolUse("t1")),
      assistant("a3", "a2", "m1", toolUse("t2", "Read"), { input_tokens: 3, output_tokens: 40 }),
      user("r1", "a2", [toolResult("t1")], { toolUseResult: { stdout: "structured copy" } }),
      user("r2", "a3", [toolResult("t2")]),
      assistant("a4", "r2", "m2", { type: "text", text: "done" }),
    ]);
    expect(shape(conversation.messages)).toEqual([
      "user:run both",
      "assistant:reasoning+tool-call+tool-call",
      "tool:tool-result",
      "tool:tool-result",
      "assistant:done",
    ]);
    const response = conversation.messages[1]!;
    expect(response.content[0]).toEqual({
      type: "reasoning",
      text: "plan",
      signature: "sig",
      signedBy: "anthropic",
    });
    expect(response.usage).toEqual({ input: 3, output: 40 });
    expect(response.model).toBe("claude-test");
    expect(conversation.messages[3]!.content[0]).toMatchObject({
      callId: "t2",
      toolName: "Read",
      content: "out t2",
    });
    expect(JSON.stringify(conversation.messages)).not.toContain("structured copy");
  });

  it("keeps redacted thinking as Anthropic's importer does, so it goes back to Anthropic unchanged", () => {
    const conversation = importOne([
      user("u1", null, "go"),
      assistant("a1", "u1", "m1", { type: "redacted_thinking", data: "opaque-bytes" }),
      assistant("a2", "a1", "m1", toolUse("t1")),
      user("r1", "a2", [toolResult("t1")]),
    ]);
    const response = conversation.messages[1]!;
    expect(response.content[0]).toEqual(
      fromAnthropic([{ role: "assistant", content: [{ type: "redacted_thinking", data: "opaque-bytes" }] }], {
        sessionId: "x",
      })[0]!.content[0],
    );
    expect(toAnthropic([response]).messages[0]!.content).toContainEqual({
      type: "redacted_thinking",
      data: "opaque-bytes",
    });
  });

  it("keeps one assistant message when tool results were written between its lines", () => {
    const conversation = importOne([
      user("u1", null, "go"),
      assistant("a1", "u1", "m1", toolUse("t1")),
      user("r1", "a1", [toolResult("t1")]),
      assistant("a2", "r1", "m1", toolUse("t2")),
      user("r2", "a2", [toolResult("t2")]),
    ]);
    expect(shape(conversation.messages)).toEqual([
      "user:go",
      "assistant:tool-call+tool-call",
      "tool:tool-result",
      "tool:tool-result",
    ]);
  });

  it("counts usage with cache reads and writes in input", () => {
    const conversation = importOne([
      user("u1", null, "hi"),
      assistant("a1", "u1", "m1", { type: "text", text: "hello" }, {
        input_tokens: 5,
        output_tokens: 9,
        cache_creation_input_tokens: 100,
        cache_read_input_tokens: 1000,
      } as never),
    ]);
    expect(conversation.messages[1]!.usage).toEqual({
      input: 1105,
      output: 9,
      cacheRead: 1000,
      cacheWrite: 100,
    });
  });

  it("puts tool results before the text of a user record holding both, and marks meta records", () => {
    const conversation = importOne([
      user("u1", null, "go"),
      assistant("a1", "u1", "m1", toolUse("t1")),
      user("r1", "a1", [
        toolResult("t1", [
          { type: "text", text: "a" },
          { type: "text", text: "b" },
        ]),
        { type: "text", text: "also this" },
      ]),
      user("u2", "r1", "<system-reminder>injected</system-reminder>", { isMeta: true }),
    ]);
    expect(shape(conversation.messages)).toEqual([
      "user:go",
      "assistant:tool-call",
      "tool:tool-result",
      "user:also this",
      "user:<system-reminder>injected</system-reminder>",
    ]);
    expect(conversation.messages[2]!.content[0]).toMatchObject({ content: "a\nb" });
    expect(conversation.messages[4]!.metadata).toEqual({ meta: true });
  });

  it("converts images and errors of tool results", () => {
    const image = { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBOR" } };
    const conversation = importOne([
      user("u1", null, [image, { type: "text", text: "what is this" }]),
      assistant("a1", "u1", "m1", toolUse("t1")),
      user("r1", "a1", [{ ...toolResult("t1", [{ type: "text", text: "shot" }, image]), is_error: true }]),
    ]);
    expect(conversation.messages[0]!.content[0]).toEqual({
      type: "image",
      mediaType: "image/png",
      data: "iVBOR",
    });
    expect(conversation.messages[2]!.content[0]).toEqual({
      type: "tool-result",
      callId: "t1",
      toolName: "Bash",
      content: "shot",
      isError: true,
      attachments: [{ type: "image", mediaType: "image/png", data: "iVBOR" }],
    });
  });

  it("continues through a compact boundary, even when its logical parent was never written", () => {
    const conversation = importOne([
      user("u1", null, "long task"),
      assistant("a1", "u1", "m1", { type: "text", text: "worked" }),
      line({ type: "progress", uuid: "p1", parentUuid: "a1" }),
      line({
        type: "system",
        subtype: "compact_boundary",
        uuid: "b1",
        parentUuid: null,
        logicalParentUuid: "never-written",
        content: "Conversation compacted",
        compactMetadata: { trigger: "auto", preTokens: 160000 },
      }),
      user("s1", "b1", "This session is being continued…", { isCompactSummary: true }),
      user("u2", "s1", "next"),
    ]);
    expect(shape(conversation.messages)).toEqual([
      "user:long task",
      "assistant:worked",
      "system:Conversation compacted",
      "user:This session is being continued…",
      "user:next",
    ]);
    expect(conversation.messages[2]).toMatchObject({
      kind: "marker",
      metadata: { subtype: "compact_boundary", trigger: "auto", preTokens: 160000 },
    });
    expect(conversation.messages[3]).toMatchObject({
      kind: "summary",
      summaryOf: { fromSeq: 0, toSeq: 1, messageCount: 2 },
    });
    expect(conversation.messages.map((message) => message.turn)).toEqual([1, 1, 1, 1, 2]);
  });

  it("answers a tool call a compaction cut off, and keeps no usage on a reply Claude Code wrote itself", () => {
    const conversation = importOne([
      user("u1", null, "lint it"),
      assistant("a1", "u1", "m1", toolUse("t1")),
      line({ type: "progress", uuid: "p1", parentUuid: "a1" }),
      line({
        type: "system",
        subtype: "compact_boundary",
        uuid: "b1",
        parentUuid: null,
        logicalParentUuid: "p1",
        compactMetadata: { trigger: "auto", preTokens: 160000 },
      }),
      user("s1", "b1", "This session is being continued…", { isCompactSummary: true }),
      line({
        type: "assistant",
        uuid: "a2",
        parentUuid: "s1",
        message: {
          id: "m2",
          role: "assistant",
          model: "<synthetic>",
          content: [{ type: "text", text: "No response requested." }],
          usage: { input_tokens: 0, output_tokens: 0 },
        },
      }),
    ]);
    expect(shape(conversation.messages)).toEqual([
      "user:lint it",
      "assistant:tool-call",
      "tool:tool-result",
      "system:Conversation compacted",
      "user:This session is being continued…",
      "assistant:No response requested.",
    ]);
    expect(conversation.messages[2]).toMatchObject({
      content: [
        {
          callId: "t1",
          toolName: "Bash",
          isError: true,
          content: "[no result recorded: the conversation was compacted while the tool call ran]",
        },
      ],
      metadata: { synthetic: true, unanswered: "compaction" },
    });
    expect(conversation.messages[4]!.summaryOf).toEqual({ fromSeq: 0, toSeq: 2, messageCount: 3 });
    expect(conversation.messages[5]).toMatchObject({ model: "<synthetic>", metadata: { synthetic: true } });
    expect(conversation.messages[5]!.usage).toBeUndefined();
  });

  it("imports sidechain records as their own conversation", () => {
    const conversations = importClaudeCode(
      jsonl([
        user("u1", null, "main prompt"),
        user("x1", null, "subagent prompt", { isSidechain: true, agentId: "abc" }),
        assistant("x2", "x1", "mx", { type: "text", text: "subagent answer" }),
      ]),
      "test.jsonl",
    );
    expect(conversations.map((conversation) => [conversation.id, conversation.sidechain ?? false])).toEqual([
      ["s1", false],
      ["s1:agent-abc", true],
    ]);
  });

  it("raises a ParseError naming the file, the line and what was expected", () => {
    const text = `${JSON.stringify(user("u1", null, "ok"))}\n{"type":"user","uuid":"u2","message":{"content":42}}\n`;
    const error = (() => {
      try {
        importClaudeCode(text, "broken.jsonl");
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ParseError);
    expect((error as ParseError).line).toBe(2);
    expect((error as ParseError).message).toMatch(
      /^broken\.jsonl:2: message\.content: .*; expected a Claude Code session record$/,
    );
    expect(() => importClaudeCode("{not json\n", "bad.jsonl")).toThrow(/^bad\.jsonl:1: invalid JSON/);
  });
});
