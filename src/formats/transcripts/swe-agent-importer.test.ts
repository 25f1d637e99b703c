import { describe, expect, it } from "vitest";
import { pairToolCalls } from "../../model/tool-pairing.ts";
import { importSweAgent } from "./swe-agent-importer.ts";

describe("importSweAgent", () => {
  it("turns text actions into calls of the bash pseudo-tool answered by the next observation", () => {
    const trajectory = {
      environment: "swe_main",
      info: { exit_status: "submitted" },
      history: [
        { role: "system", content: "SETTING: …" },
        { role: "user", content: "Here is a demonstration…", is_demo: true },
        { role: "user", content: "We're currently solving the following issue…" },
        {
          role: "assistant",
          content: "Let's find it.\n```\nfind_file x.py\n```",
          action: "find_file x.py\n",
        },
        { role: "user", content: "Found 1 matches" },
        { role: "assistant", content: "Done.\n```\nsubmit\n```", action: "submit\n" },
      ],
    };
    const [run] = importSweAgent(JSON.stringify(trajectory), "runs/x__y-1.traj");
    const messages = run!.messages;
    expect(run!.id).toBe("x__y-1");
    expect(run!.metadata).toEqual({ environment: "swe_main", exitStatus: "submitted" });
    expect(messages.map((message) => message.role)).toEqual([
      "system",
      "user",
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
    expect(messages[1]!.metadata).toEqual({ demo: true });
    expect(messages[3]!.content[1]).toEqual({
      type: "tool-call",
      id: "action-3",
      name: "bash",
      input: { command: "find_file x.py\n" },
    });
    expect(messages[4]!.content[0]).toMatchObject({
      callId: "action-3",
      toolName: "bash",
      content: "Found 1 matches",
    });
    // The closing action has no observation in the history: it stays text, the action kept in metadata.
    expect(messages[5]!.content.map((block) => block.type)).toEqual(["text"]);
    expect(messages[5]!.metadata).toEqual({ action: "submit\n" });
    expect(pairToolCalls(messages).pairs.every((pair) => pair.result !== undefined)).toBe(true);
  });

  it("imports function-calling runs as OpenAI tool calls and tool messages", () => {
    const trajectory = {
      history: [
        { role: "system", content: "SETTING", message_type: "system_prompt" },
        { role: "user", content: "issue", message_type: "observation" },
        {
          role: "assistant",
          content: "List files.",
          action: "ls -F",
          message_type: "action",
          tool_calls: [
            { id: "call_a", type: "function", function: { name: "bash", arguments: '{"command":"ls -F"}' } },
          ],
        },
        {
          role: "tool",
          content: [{ type: "text", text: "setup.py" }],
          tool_call_ids: ["call_a"],
          message_type: "observation",
        },
      ],
    };
    const [run] = importSweAgent(JSON.stringify(trajectory), "run.traj");
    expect(run!.messages.map((message) => message.role)).toEqual(["system", "user", "assistant", "tool"]);
    expect(run!.messages[2]!.content[1]).toEqual({
      type: "tool-call",
      id: "call_a",
      name: "bash",
      input: { command: "ls -F" },
    });
    expect(run!.messages[3]!.content[0]).toEqual({
      type: "tool-result",
      callId: "call_a",
      toolName: "bash",
      content: "setup.py",
    });
  });
});
