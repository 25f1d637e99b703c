import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { RunnableWithMessageHistory } from "@langchain/core/runnables";
import { fakeModel } from "@langchain/core/testing";
import { describe, expect, it } from "vitest";
import { MemorySessionStore } from "../../store/memory/index.ts";
import { CtxkitChatMessageHistory } from "./ctxkit-chat-message-history.ts";
import { testEngine } from "../shared/test-engine.test-helpers.ts";

const engineOver = (store: MemorySessionStore, contextWindow = 16_000) => testEngine(store, contextWindow);

function textOf(message: BaseMessage): string {
  return typeof message.content === "string" ? message.content : JSON.stringify(message.content);
}

describe("CtxkitChatMessageHistory", () => {
  it("keeps a RunnableWithMessageHistory chain's conversation in the store", async () => {
    const store = new MemorySessionStore();
    const engine = await engineOver(store);
    const model = fakeModel();
    for (let call = 0; call < 3; call++)
      model.respond((messages) => new AIMessage(`reply ${call} to ${messages.length} messages`));
    const prompt = ChatPromptTemplate.fromMessages([
      ["system", "You are terse."],
      new MessagesPlaceholder("history"),
      ["human", "{question}"],
    ]);
    const chain = new RunnableWithMessageHistory({
      runnable: prompt.pipe(model),
      getMessageHistory: (sessionId: string) => new CtxkitChatMessageHistory({ engine, sessionId }),
      inputMessagesKey: "question",
      historyMessagesKey: "history",
    });
    const ask = (sessionId: string, question: string) =>
      chain.invoke({ question }, { configurable: { sessionId } });

    await ask("chat-1", "first");
    await ask("chat-2", "elsewhere");
    const reply = await ask("chat-1", "second");

    expect(textOf(reply)).toBe("reply 2 to 4 messages");
    expect(model.calls[2]!.messages.map(textOf)).toEqual([
      "You are terse.",
      "first",
      "reply 0 to 2 messages",
      "second",
    ]);
    const stored = await store.loadMessages("chat-1");
    expect(stored.map((message) => [message.role, message.content])).toEqual([
      ["user", [{ type: "text", text: "first" }]],
      ["assistant", [{ type: "text", text: "reply 0 to 2 messages" }]],
      ["user", [{ type: "text", text: "second" }]],
      ["assistant", [{ type: "text", text: "reply 2 to 4 messages" }]],
    ]);
    expect(await store.loadMessages("chat-2")).toHaveLength(2);
  });

  it("returns the governed history: old tool output offloaded, the tool pair intact, the store verbatim", async () => {
    const store = new MemorySessionStore();
    const engine = await engineOver(store, 8_000);
    const history = new CtxkitChatMessageHistory({ engine, sessionId: "tools" });
    const output = "x".repeat(40_000);
    for (let turn = 0; turn < 3; turn++) {
      await history.addMessages([
        new HumanMessage(`read ${turn}`),
        new AIMessage({ content: "", tool_calls: [{ id: `c${turn}`, name: "read", args: { turn } }] }),
        new ToolMessage({ content: output, tool_call_id: `c${turn}`, name: "read" }),
        new AIMessage(`read ${turn} done`),
      ]);
    }
    const governed = await history.getMessages();
    const chars = governed.reduce((sum, message) => sum + textOf(message).length, 0);
    expect(chars / 4).toBeLessThan(8_000);
    const tools = governed.filter((message) => ToolMessage.isInstance(message));
    const calls = governed.flatMap((message) =>
      AIMessage.isInstance(message) ? (message.tool_calls ?? []) : [],
    );
    expect(new Set(tools.map((message) => message.tool_call_id))).toEqual(
      new Set(calls.map((call) => call.id)),
    );
    expect(textOf(governed.at(-1)!)).toBe("read 2 done");
    const stored = await store.loadMessages("tools", { strategy: "all" });
    const results = stored
      .flatMap((message) => message.content)
      .filter((block) => block.type === "tool-result");
    expect(results.map((block) => block.content)).toEqual([output, output, output]);
  });

  it("clear() deletes the session", async () => {
    const store = new MemorySessionStore();
    const engine = await engineOver(store);
    const history = new CtxkitChatMessageHistory({ engine, sessionId: "gone" });
    await history.addUserMessage("hello");
    await history.addAIMessage("hi");
    expect((await history.getMessages()).map(textOf)).toEqual(["hello", "hi"]);
    await history.clear();
    expect(await store.getSession("gone")).toBeUndefined();
    expect(await history.getMessages()).toEqual([]);
    await history.addUserMessage("again");
    expect(
      (await new CtxkitChatMessageHistory({ engine, sessionId: "gone" }).getMessages()).map(textOf),
    ).toEqual(["again"]);
  });
});
