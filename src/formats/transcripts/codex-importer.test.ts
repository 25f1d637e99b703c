import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { toOpenAIResponses } from "../providers/openai-responses/index.ts";
import { transcriptFiles } from "../../../test/support/transcripts.ts";
import { importCodex } from "./codex-importer.ts";
import { detectFormat } from "./detect-format.ts";
import { importTranscriptFile } from "./import-transcript.ts";

type Fields = { [key: string]: unknown };
const at = (second: number) => `2026-05-11T08:00:${String(second).padStart(2, "0")}.000Z`;
const item = (second: number, payload: Fields) => ({ timestamp: at(second), type: "response_item", payload });
const event = (second: number, payload: Fields) => ({ timestamp: at(second), type: "event_msg", payload });
const tokens = (second: number, input: number, cached: number, output: number, reasoning: number) =>
  event(second, {
    type: "token_count",
    info: {
      last_token_usage: {
        input_tokens: input,
        cached_input_tokens: cached,
        output_tokens: output,
        reasoning_output_tokens: reasoning,
      },
    },
  });
const text = (role: string, value: string) => ({
  type: "message",
  role,
  content: [{ type: role === "assistant" ? "output_text" : "input_text", text: value }],
});

const rollout = [
  {
    timestamp: at(0),
    type: "session_meta",
    payload: {
      id: "rollout-1",
      cwd: "/repo",
      cli_version: "0.125.0",
      base_instructions: { text: "You are Codex." },
    },
  },
  item(1, text("developer", "<permissions instructions>")),
  item(2, text("user", "<environment_context>")),
  { timestamp: at(3), type: "turn_context", payload: { model: "gpt-5" } },
  item(4, text("user", "list files")),
  event(4, { type: "user_message", message: "list files" }),
  item(5, { type: "reasoning", summary: [], content: null, encrypted_content: "gAAAA" }),
  item(6, text("assistant", "Listing.")),
  item(7, { type: "function_call", name: "exec_command", arguments: '{"cmd":"ls"}', call_id: "c1" }),
  item(7, { type: "web_search_call", status: "completed", action: { type: "search", query: "codex" } }),
  tokens(8, 1000, 800, 50, 20),
  item(9, { type: "function_call_output", call_id: "c1", output: "a.ts\nb.ts" }),
  item(10, { type: "custom_tool_call", name: "apply_patch", input: "*** Begin Patch", call_id: "c2" }),
  tokens(11, 1100, 1000, 30, 0),
  item(12, { type: "custom_tool_call_output", call_id: "c2", output: '{"output":"Success"}' }),
  item(13, { type: "function_call", name: "js", arguments: "not json {", call_id: "c3" }),
  item(14, { type: "function_call_output", call_id: "c3", output: "ok" }),
  tokens(15, 1200, 0, 10, 0),
  item(16, text("assistant", "Done.")),
  tokens(17, 1300, 1200, 5, 0),
];
const jsonl = rollout.map((record) => JSON.stringify(record)).join("\n");

describe("importCodex", () => {
  const [conversation] = importCodex(jsonl, "rollout.jsonl");
  const messages = conversation!.messages;

  it("turns the rollout into system, user, assistant and tool messages", () => {
    expect(conversation!.id).toBe("rollout-1");
    expect(
      messages.map((message) => `${message.role}:${message.content.map((block) => block.type).join("+")}`),
    ).toEqual([
      "system:text",
      "system:text",
      "user:text",
      "user:text",
      "assistant:reasoning+text+tool-call+tool-call",
      "tool:tool-result",
      "tool:tool-result",
      "assistant:tool-call",
      "tool:tool-result",
      "assistant:tool-call",
      "tool:tool-result",
      "assistant:text",
    ]);
    expect(messages[0]!.metadata).toEqual({ origin: "base_instructions" });
    expect(messages[1]!.metadata).toEqual({ role: "developer" });
    expect(messages[2]!.metadata).toEqual({ meta: true });
    expect(messages[3]!.metadata).toBeUndefined();
    expect(messages.map((message) => message.turn)).toEqual([0, 0, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2]);
  });

  it("attaches each token_count to the request whose output it follows", () => {
    const usages = messages.filter((message) => message.role === "assistant").map((message) => message.usage);
    expect(usages).toEqual([
      { input: 1000, output: 50, cacheRead: 800, reasoning: 20 },
      { input: 1100, output: 30, cacheRead: 1000, reasoning: 0 },
      // This request's token_count came after its tool output; it still belongs to the call that caused it.
      { input: 1200, output: 10, cacheRead: 0, reasoning: 0 },
      { input: 1300, output: 5, cacheRead: 1200, reasoning: 0 },
    ]);
    expect(messages[4]!.model).toBe("gpt-5");
  });

  it("keeps encrypted reasoning opaque, parses JSON arguments and pairs web searches with a synthetic result", () => {
    expect(messages[4]!.content[0]).toEqual({
      type: "reasoning",
      text: "",
      redacted: true,
      providerData: { openai: { reasoningEncryptedContent: "gAAAA" } },
    });
    // The encrypted content goes back to OpenAI as the reasoning item it was.
    expect(toOpenAIResponses([messages[4]!])[0]).toMatchObject({
      type: "reasoning",
      encrypted_content: "gAAAA",
    });
    expect(messages[4]!.content[2]).toEqual({
      type: "tool-call",
      id: "c1",
      name: "exec_command",
      input: { cmd: "ls" },
    });
    const search = messages[4]!.content[3]!;
    expect(search).toMatchObject({
      type: "tool-call",
      name: "web_search",
      input: { type: "search", query: "codex" },
    });
    expect(messages[5]!.content[0]).toMatchObject({ callId: (search as { id: string }).id, content: "" });
    expect(messages[5]!.metadata).toEqual({ synthetic: true });
    expect(messages[6]!.content[0]).toMatchObject({
      callId: "c1",
      toolName: "exec_command",
      content: "a.ts\nb.ts",
    });
    expect(messages[7]!.content[0]).toMatchObject({ name: "apply_patch", input: "*** Begin Patch" });
    expect(messages[9]!.content[0]).toMatchObject({ name: "js", input: "not json {" });
    // A function call with broken arguments stays a function call; the apply_patch call a free-form one.
    expect(
      toOpenAIResponses([messages[7]!, messages[9]!]).map((item) => (item as { type: string }).type),
    ).toEqual(["custom_tool_call", "function_call"]);
  });

  it("raises a ParseError for a response item of the wrong shape", () => {
    const broken = `${jsonl}\n${JSON.stringify(item(20, { type: "function_call", name: "x", call_id: "c9" }))}`;
    expect(() => importCodex(broken, "rollout.jsonl")).toThrow(
      /^rollout\.jsonl:21: payload\.arguments: .*; expected a Codex response item$/,
    );
  });

  it("imports other client-run calls by their type (tool search) and a compaction as a marker and a summary", () => {
    const [imported] = importCodex(
      [
        item(1, text("user", "fix CI")),
        item(2, text("assistant", "Looking for a GitHub tool.")),
        item(3, {
          type: "tool_search_call",
          call_id: "s1",
          status: "completed",
          execution: "client",
          arguments: { query: "pull request checks", limit: 5 },
        }),
        item(4, {
          type: "tool_search_output",
          call_id: "s1",
          status: "completed",
          execution: "client",
          tools: [{ type: "function", name: "_fetch_pr" }],
        }),
        tokens(4, 900, 0, 12, 0),
        item(5, {
          type: "function_call",
          name: "exec_command",
          arguments: '{"cmd":"gh pr checks"}',
          call_id: "c1",
        }),
        item(6, { type: "function_call_output", call_id: "c1", output: "lint: fail" }),
        {
          timestamp: at(7),
          type: "compacted",
          payload: { message: "Summary: lint fails on PR 12.", replacement_history: [] },
        },
        item(8, text("user", "go on")),
      ]
        .map((record) => JSON.stringify(record))
        .join("\n"),
      "rollout.jsonl",
    );
    const shape = imported!.messages.map(
      (message) =>
        `${message.role}${message.kind ? `/${message.kind}` : ""}:${message.content.map((block) => block.type).join("+")}`,
    );
    expect(shape).toEqual([
      "user:text",
      "assistant:text+tool-call",
      "tool:tool-result",
      "assistant:tool-call",
      "tool:tool-result",
      "system/marker:text",
      "user/summary:text",
      "user:text",
    ]);
    expect(imported!.messages[1]!.content[1]).toEqual({
      type: "tool-call",
      id: "s1",
      name: "tool_search",
      input: { query: "pull request checks", limit: 5 },
    });
    expect(imported!.messages[2]!.content[0]).toEqual({
      type: "tool-result",
      callId: "s1",
      toolName: "tool_search",
      content: { tools: [{ type: "function", name: "_fetch_pr" }] },
    });
    expect(imported!.messages[1]!.usage).toMatchObject({ input: 900, output: 12 });
    expect(imported!.messages[6]!.summaryOf).toEqual({ fromSeq: 0, toSeq: 4, messageCount: 5 });
  });

  it("gives a call the rollout ends before answering a result that says so", () => {
    const cut = [
      item(1, text("user", "push")),
      item(2, { type: "function_call", name: "exec_command", arguments: "{}", call_id: "c1" }),
    ];
    const [imported] = importCodex(cut.map((record) => JSON.stringify(record)).join("\n"), "rollout.jsonl");
    expect(imported!.messages.at(-1)).toMatchObject({
      role: "tool",
      content: [
        {
          type: "tool-result",
          callId: "c1",
          toolName: "exec_command",
          isError: true,
          content: expect.stringMatching(/^\[no result recorded: the transcript ends/),
        },
      ],
      metadata: { synthetic: true, unanswered: "end-of-transcript" },
    });
  });

  it("keeps usage on every assistant message of the real rollouts but an aborted or cut-off request's", async () => {
    const rollouts = transcriptFiles.filter(
      (file) => detectFormat(readFileSync(file, "utf8"), file) === "codex",
    );
    expect(rollouts.length).toBeGreaterThan(1);
    for (const file of rollouts) {
      const text = readFileSync(file, "utf8");
      // The second rollout of the codemie corpus records no token counts.
      if (!text.includes('"token_count"')) continue;
      const [imported] = await importTranscriptFile(file);
      const assistants = imported!.messages.filter((message) => message.role === "assistant");
      expect(assistants.length).toBeGreaterThan(10);
      // A request the user aborted, or the one the rollout ends in, gets no token_count.
      const aborted = text.split('"type":"turn_aborted"').length - 1;
      const cutOff = imported!.messages.at(-1)?.metadata?.["unanswered"] === "end-of-transcript" ? 1 : 0;
      const withoutUsage = assistants.filter((message) => message.usage === undefined).length;
      expect(withoutUsage, file).toBeLessThanOrEqual(aborted + cutOff);
    }
  });
});
