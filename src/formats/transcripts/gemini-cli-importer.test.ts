import { describe, expect, it } from "vitest";
import { importGeminiCli } from "./gemini-cli-importer.ts";

const session = {
  sessionId: "g-1",
  projectHash: "abc",
  messages: [
    { id: "1", timestamp: "2025-12-01T21:45:34.000Z", type: "user", content: "read lead.txt" },
    { id: "2", timestamp: "2025-12-01T21:45:35.000Z", type: "info", content: "UI notice" },
    {
      id: "3",
      timestamp: "2025-12-01T21:45:36.000Z",
      type: "gemini",
      content: "",
      model: "gemini-2.5-pro",
      thoughts: [{ subject: "Reading", description: "I will read the file." }],
      tokens: { input: 2800, output: 30, cached: 2000, thoughts: 100, tool: 5, total: 2935 },
      toolCalls: [
        {
          id: "read_file-1",
          name: "read_file",
          args: { file_path: "lead.txt" },
          status: "success",
          timestamp: "2025-12-01T21:45:37.000Z",
          result: [
            {
              functionResponse: {
                id: "read_file-1",
                name: "read_file",
                response: { output: "## Instructions" },
              },
            },
          ],
        },
        {
          id: "shell-2",
          name: "run_shell_command",
          args: { command: "false" },
          status: "error",
          result: [
            { functionResponse: { id: "shell-2", name: "run_shell_command", response: { error: "exit 1" } } },
          ],
        },
      ],
    },
    {
      id: "4",
      timestamp: "2025-12-01T21:45:40.000Z",
      type: "gemini",
      content: "It holds instructions.",
      tokens: { input: 3000, output: 6, cached: 0, thoughts: 0, tool: 0, total: 3006 },
    },
  ],
};

describe("importGeminiCli", () => {
  const [conversation] = importGeminiCli(JSON.stringify(session, null, 2), "session.json");
  const messages = conversation!.messages;

  it("splits a gemini message into an assistant turn and one tool message per call", () => {
    expect(conversation!.id).toBe("g-1");
    expect(messages.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "tool",
      "assistant",
    ]);
    expect(messages[1]!.content).toEqual([
      { type: "reasoning", text: "Reading\n\nI will read the file." },
      { type: "tool-call", id: "read_file-1", name: "read_file", input: { file_path: "lead.txt" } },
      { type: "tool-call", id: "shell-2", name: "run_shell_command", input: { command: "false" } },
    ]);
    expect(messages[2]!.content[0]).toEqual({
      type: "tool-result",
      callId: "read_file-1",
      toolName: "read_file",
      content: "## Instructions",
    });
    expect(messages[2]!.createdAt).toBe("2025-12-01T21:45:37.000Z");
    expect(messages[3]!.content[0]).toMatchObject({ content: "exit 1", isError: true });
  });

  it("reports usage with cached and tool prompt tokens in input and thoughts in output", () => {
    expect(messages[1]!.usage).toEqual({ input: 2805, output: 130, cacheRead: 2000, reasoning: 100 });
    expect(messages[1]).toMatchObject({ model: "gemini-2.5-pro", provider: "google" });
  });

  it("names the line of a JSON syntax error", () => {
    expect(() => importGeminiCli('{\n  "sessionId": "x",\n  "messages": [,]\n}', "broken.json")).toThrow(
      /^broken\.json:3: invalid JSON .*; expected a Gemini CLI session/,
    );
    expect(() => importGeminiCli('{"sessionId": "x"}', "empty.json")).toThrow(/^empty\.json: messages: /);
  });
});
