import { generateText, stepCountIs, wrapLanguageModel, type ModelMessage } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { MemorySessionStore } from "../../store/memory/index.ts";
import { ctxkitSessionMiddleware } from "../ai-sdk/session-middleware.ts";
import { engineOver, readFile, readingModel } from "../ai-sdk/reading-agent.test-helpers.ts";
import { entriesOf } from "./language-model-prompt.ts";
import { SessionFeed } from "./session-feed.ts";

const isAssistant = (message: ModelMessage) => message.role === "assistant";
const key = (message: ModelMessage) => JSON.stringify(message);

describe("SessionFeed.unseen", () => {
  it("through ctxkitSessionMiddleware, records nothing twice when a call that failed part-way is sent again", async () => {
    const store = new MemorySessionStore();
    const engine = await engineOver(store);
    const reading = readingModel();
    let failures = 1;
    const model = new MockLanguageModelV4({
      doGenerate: async (options) => {
        if (options.prompt.at(-1)?.role === "tool" && failures-- > 0) throw new Error("503 overloaded");
        return reading.doGenerate(options);
      },
    });
    const wrapped = wrapLanguageModel({ model, middleware: ctxkitSessionMiddleware({ engine }) });
    const messages: ModelMessage[] = [{ role: "user", content: "first question" }];
    const call = () =>
      generateText({
        model: wrapped,
        tools: { read_file: readFile },
        messages,
        stopWhen: stepCountIs(4),
        maxRetries: 0,
        providerOptions: { ctxkit: { sessionId: "chat" } },
      });
    await expect(call()).rejects.toThrow("503");
    expect((await call()).text).toBe("Answered: first question");
    const stored = await store.loadMessages("chat", { strategy: "all" });
    expect(stored.map((message) => message.role)).toEqual(["user", "assistant", "tool", "assistant"]);
  });

  it("takes a question sent again after its final answer as a new question, and an edited one as new", async () => {
    const engine = await engineOver(new MemorySessionStore());
    const session = engine.session("chat");
    await session.addUser("first question");
    await session.recordAssistant({ content: [{ type: "tool-call", id: "c1", name: "ls", input: {} }] });
    await session.recordToolResults([{ callId: "c1", toolName: "ls", content: "a.ts" }]);
    const feed = new SessionFeed<ModelMessage>(session);
    const asked: ModelMessage[] = [{ role: "user", content: "first question" }];
    // The tool step is in progress: the question is held.
    expect(await feed.unseen(asked, isAssistant, key, entriesOf)).toEqual([]);
    // Edited, it is new.
    const edited: ModelMessage[] = [{ role: "user", content: "first question, edited" }];
    expect(await feed.unseen(edited, isAssistant, key, entriesOf)).toEqual(edited);
    // Without the reader, only the position counts (what the adapters did before).
    expect(await feed.unseen(asked, isAssistant, key)).toEqual(asked);
    await session.recordAssistant({ content: "a.ts" });
    await session.commit();
    // After the final answer, the same question again is a new one (a regenerate asks again).
    expect(await feed.unseen(asked, isAssistant, key, entriesOf)).toEqual(asked);
    // The client's copy of the answer is recognised, and what follows it is new.
    const next: ModelMessage[] = [
      ...asked,
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "ls", input: {} }] },
      {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: "c1", toolName: "ls", output: { type: "text", value: "a.ts" } },
        ],
      },
      { role: "assistant", content: "a.ts" },
      { role: "user", content: "second question" },
    ];
    const unseen = await feed.unseen(next, isAssistant, key, entriesOf);
    expect(unseen.map((message) => message.content)).toEqual(["second question"]);
  });
});
