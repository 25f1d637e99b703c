import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { anthropic } from "@ai-sdk/anthropic";
import type { LanguageModelV4CallOptions, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { convertToModelMessages, stepCountIs, streamText, tool, wrapLanguageModel, type UIMessage } from "ai";
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { MemorySessionStore } from "../../store/memory/index.ts";
import { openSqliteSessionStore } from "../../store/sqlite/index.ts";
import { FakeSummarizer } from "../../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../../test/fake-token-counter.ts";
import { ctxkitMiddleware } from "./middleware.ts";
import { loadChat, saveChat } from "./ui-chat-store.ts";

const usage = {
  inputTokens: { total: 100, noCache: 100, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 10, text: 10, reasoning: 0 },
};

/** Streams a file read on a new question, then an answer naming how many prompt messages it saw. */
function readingModel() {
  return new MockLanguageModelV4({
    doStream: async ({ prompt }: LanguageModelV4CallOptions) => {
      const parts: LanguageModelV4StreamPart[] =
        prompt.at(-1)?.role === "tool"
          ? [
              { type: "reasoning-start", id: "r" },
              { type: "reasoning-delta", id: "r", delta: "The file is read." },
              { type: "reasoning-end", id: "r" },
              { type: "text-start", id: "t" },
              { type: "text-delta", id: "t", delta: `Seen ${prompt.length} messages.` },
              { type: "text-end", id: "t" },
              { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage },
            ]
          : [
              {
                type: "tool-call",
                toolCallId: `call_${prompt.length}`,
                toolName: "read_file",
                input: JSON.stringify({ path: "a.ts" }),
              },
              { type: "finish", finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage },
            ];
      return { stream: convertArrayToReadableStream(parts) };
    },
  });
}

const tools = {
  read_file: tool({
    description: "Reads a file",
    inputSchema: z.object({ path: z.string() }),
    execute: async ({ path }) => `contents of ${path}`,
  }),
};

let ids = 0;
const user = (text: string): UIMessage => ({
  id: `u${++ids}`,
  role: "user",
  parts: [{ type: "text", text }],
});

/** The route of `examples/ai-sdk-ui-route.ts`, in-process: governed model, chat saved on finish. */
async function post(store: MemorySessionStore, id: string, messages: UIMessage[]): Promise<UIMessage[]> {
  const model = wrapLanguageModel({
    model: readingModel(),
    middleware: ctxkitMiddleware({
      sessionId: id,
      contextWindow: 16_000,
      counter: new FakeTokenCounter(),
      summarizer: new FakeSummarizer(),
    }),
  });
  const result = streamText({
    model,
    tools,
    messages: await convertToModelMessages(messages),
    stopWhen: stepCountIs(5),
  });
  let saved: Promise<void> | undefined;
  const response = result.toUIMessageStreamResponse({
    originalMessages: messages,
    generateMessageId: () => `a${++ids}`,
    onFinish: ({ messages }) => {
      saved = saveChat(store, id, messages);
    },
  });
  await response.text();
  await saved;
  return loadChat(store, id);
}

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

describe("loadChat / saveChat", () => {
  it("keeps a useChat conversation through a streamed, governed route with a tool step", async () => {
    const store = new MemorySessionStore();
    const first = await post(store, "chat-1", [user("What is in a.ts?")]);
    expect(first.map((message) => message.role)).toEqual(["user", "assistant"]);
    const reply = first[1]!;
    expect(reply.parts.map((part) => part.type)).toEqual([
      "step-start",
      "tool-read_file",
      "step-start",
      "reasoning",
      "text",
    ]);
    expect(reply.parts[1]).toMatchObject({ state: "output-available", output: "contents of a.ts" });

    const second = await post(store, "chat-1", [...first, user("And b.ts?")]);
    expect(second.slice(0, 2)).toEqual(first);
    // The model of the second request saw the first exchange (user, call, result, answer) and the new question.
    expect(second.at(-1)!.parts.at(-1)).toEqual({ type: "text", text: "Seen 7 messages.", state: "done" });
    const rows = await store.loadMessages("chat-1");
    expect(rows.map((row) => row.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
    expect(rows[2]!.content[0]).toMatchObject({
      type: "tool-result",
      callId: "call_1",
      toolName: "read_file",
      content: "contents of a.ts",
    });
  });

  it("round-trips every kind of UI part unchanged, across a restart", async () => {
    const directory = mkdtempSync(join(tmpdir(), "ctxkit-ui-"));
    directories.push(directory);
    const path = join(directory, "chats.db");
    const messages: UIMessage[] = [
      { id: "s", role: "system", parts: [{ type: "text", text: "Be brief." }] },
      {
        id: "u",
        role: "user",
        metadata: { sentAt: 1 },
        parts: [
          { type: "text", text: "Look at this" },
          {
            type: "file",
            mediaType: "image/png",
            url: "data:image/png;base64,iVBORw0KGgo=",
            filename: "p.png",
          },
        ],
      },
      {
        id: "a",
        role: "assistant",
        parts: [
          { type: "step-start" },
          {
            type: "reasoning",
            text: "thinking",
            state: "done",
            providerMetadata: { anthropic: { signature: "sig" } },
          },
          {
            type: "tool-read_file",
            toolCallId: "c1",
            state: "output-available",
            input: { path: "a.ts" },
            output: "contents",
          },
          {
            type: "dynamic-tool",
            toolName: "search",
            toolCallId: "c2",
            state: "output-error",
            input: { q: "x" },
            errorText: "no index",
          },
          { type: "step-start" },
          { type: "source-url", sourceId: "s1", url: "https://example.com", title: "Example" },
          { type: "data-weather", id: "w", data: { city: "Oslo", degrees: 3 } },
          { type: "text", text: "Done.", state: "done" },
        ],
      },
      { id: "d", role: "assistant", parts: [{ type: "data-progress", data: { percent: 100 } }] },
    ];
    const first = await openSqliteSessionStore({ path });
    await saveChat(first, "rich", messages);
    await first.close();
    const second = await openSqliteSessionStore({ path });
    expect(await loadChat(second, "rich")).toEqual(messages);
    const rows = await second.loadMessages("rich");
    await second.close();
    // What the model side sees is real content: the image, the call and its result, the answer.
    expect(rows.flatMap((row) => row.content.map((block) => block.type))).toEqual(
      expect.arrayContaining(["text", "image", "reasoning", "tool-call", "tool-result"]),
    );
  });

  it("appends new messages and rewrites a chat that diverged (regenerate), keeping the session record", async () => {
    const store = new MemorySessionStore();
    const question = user("Hi");
    const answer = (text: string): UIMessage => ({
      id: `a-${text}`,
      role: "assistant",
      parts: [{ type: "text", text }],
    });
    await saveChat(store, "c", [question, answer("one")]);
    const created = (await store.getSession("c"))!;
    await saveChat(store, "c", [question, answer("one")]);
    expect((await store.getSession("c"))!.nextSeq).toBe(created.nextSeq);

    await saveChat(store, "c", [question, answer("two")]);
    expect(await loadChat(store, "c")).toEqual([question, answer("two")]);
    const rewritten = (await store.getSession("c"))!;
    expect(rewritten.createdAt).toBe(created.createdAt);
    expect(rewritten.messageCount).toBe(2);
    expect(rewritten.nextSeq).toBeGreaterThan(created.nextSeq);
    expect((await store.loadMessages("c", { strategy: "all" })).map((row) => row.content)).toEqual([
      [{ type: "text", text: "Hi" }],
      [{ type: "text", text: "two" }],
    ]);

    const later = user("More?");
    await saveChat(store, "c", [question, answer("two"), later]);
    expect(await loadChat(store, "c")).toEqual([question, answer("two"), later]);
  });

  it("saves a chat with a provider-executed tool part, and shows another writer's as one", async () => {
    const store = new MemorySessionStore();
    const search = anthropic.tools.webSearch_20250305({ maxUses: 1 });
    const chat: UIMessage[] = [
      user("Search for ctxkit"),
      {
        id: "a-search",
        role: "assistant",
        parts: [
          { type: "step-start" },
          {
            type: "tool-web_search",
            toolCallId: "ws1",
            state: "output-available",
            input: { query: "ctxkit" },
            output: [{ type: "web_search_result", url: "https://a.test", title: "A" }],
            providerExecuted: true,
          },
          { type: "text", text: "Found A.", state: "done" },
        ],
      },
    ];
    await saveChat(store, "searched", chat, { tools: { ...tools, web_search: search } });
    expect(await loadChat(store, "searched")).toEqual(chat);
    const rows = await store.loadMessages("searched", { strategy: "all" });
    expect(rows[1]!.content.map((block) => block.type)).toEqual(["opaque", "opaque", "text"]);
    // The same rows without the saved UI message, as another writer would have stored them.
    await store.appendTurn(
      "engine-searched",
      rows.map(({ role, content }) => ({ role, content })),
    );
    const shown = await loadChat(store, "engine-searched");
    expect(shown[1]!.parts).toEqual([
      {
        type: "dynamic-tool",
        toolName: "web_search",
        toolCallId: "ws1",
        state: "output-available",
        input: { query: "ctxkit" },
        output: [{ type: "web_search_result", url: "https://a.test", title: "A" }],
        providerExecuted: true,
      },
      { type: "text", text: "Found A." },
    ]);
  });

  it("shows messages another writer stored as UI messages, tool results joined to their calls", async () => {
    const store = new MemorySessionStore();
    expect(await loadChat(store, "none")).toEqual([]);
    await store.appendTurn("engine", [
      { role: "user", content: [{ type: "text", text: "Read a.ts" }] },
      { role: "assistant", content: [{ type: "tool-call", id: "c", name: "read", input: { path: "a.ts" } }] },
      { role: "tool", content: [{ type: "tool-result", callId: "c", toolName: "read", content: "x" }] },
      { role: "assistant", content: [{ type: "text", text: "It holds x." }] },
    ]);
    const chat = await loadChat(store, "engine");
    expect(chat.map((message) => message.parts)).toEqual([
      [{ type: "text", text: "Read a.ts" }],
      [
        {
          type: "dynamic-tool",
          toolName: "read",
          toolCallId: "c",
          state: "output-available",
          input: { path: "a.ts" },
          output: "x",
        },
      ],
      [{ type: "text", text: "It holds x." }],
    ]);
  });
});
