import { describe, expect, it } from "vitest";
import { ParseError } from "../../errors/errors.ts";
import { importOpenAiChat } from "./openai-chat-importer.ts";

const traj = [
  { role: "system", content: "policy" },
  { role: "user", content: "book a flight" },
  {
    role: "assistant",
    content: null,
    tool_calls: [
      { id: "call_1", type: "function", function: { name: "search", arguments: '{"from":"JFK"}' } },
    ],
  },
  { role: "tool", tool_call_id: "call_1", name: "search", content: '[{"flight":"HAT136"}]' },
  { role: "assistant", content: "Found HAT136." },
];

describe("importOpenAiChat", () => {
  it("imports one conversation per tau-bench episode", () => {
    const episodes = [
      { task_id: 0, trial: 0, reward: 1, traj },
      { task_id: 0, trial: 1, reward: 0, traj: traj.slice(0, 2) },
    ];
    const conversations = importOpenAiChat(JSON.stringify(episodes), "runs/gpt-4o-airline.json");
    expect(conversations.map((conversation) => conversation.id)).toEqual([
      "gpt-4o-airline:task-0-trial-0",
      "gpt-4o-airline:task-0-trial-1",
    ]);
    expect(conversations[0]!.metadata).toEqual({ taskId: 0, trial: 0, reward: 1 });
    const messages = conversations[0]!.messages;
    expect(messages.map((message) => message.role)).toEqual([
      "system",
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
    expect(messages[2]!.content).toEqual([
      { type: "tool-call", id: "call_1", name: "search", input: { from: "JFK" } },
    ]);
    expect(messages[3]!.content[0]).toEqual({
      type: "tool-result",
      callId: "call_1",
      toolName: "search",
      content: '[{"flight":"HAT136"}]',
    });
  });

  it("imports a plain message list and a {messages} object, with content parts", () => {
    const parts = [
      {
        role: "user",
        content: [
          { type: "text", text: "see" },
          { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
        ],
      },
    ];
    const [fromList] = importOpenAiChat(JSON.stringify(parts), "chat.json");
    const [fromObject] = importOpenAiChat(JSON.stringify({ messages: parts }), "chat.json");
    expect(fromList!.id).toBe("chat");
    expect(fromList!.messages[0]!.content).toEqual([
      { type: "text", text: "see" },
      { type: "image", mediaType: "image/png", data: "AAAA" },
    ]);
    expect(fromObject!.messages).toEqual(fromList!.messages);
  });

  it("rejects a tool message without tool_call_id and a message without role", () => {
    expect(() => importOpenAiChat(JSON.stringify([{ role: "tool", content: "x" }]), "chat.json")).toThrow(
      ParseError,
    );
    expect(() => importOpenAiChat(JSON.stringify([{ content: "x" }]), "chat.json")).toThrow(
      /^chat\.json: messages\.\[0\]\.role|^chat\.json: messages\[0\]\.role/,
    );
  });
});
