// README: a LangChain.js v1 agent whose every model call is governed by ctxkit, each thread kept in a ctxkit
// store; and a classic chain with its history on the same store. Type-checked by `npm test`.
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { RunnableWithMessageHistory } from "@langchain/core/runnables";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent, initChatModel, tool } from "langchain";
import { z } from "zod";
import { createContextEngine } from "ctxkit";
import { CtxkitChatMessageHistory, ctxkitLangChainMiddleware } from "ctxkit/langchain";
import { openSqliteSessionStore } from "ctxkit/sqlite";

const engine = await createContextEngine({
  store: await openSqliteSessionStore({ path: "agent.db" }),
  model: "gpt-4.1", // window, output limit, tokenizer and cache prices of the model the agent calls
});

const readFile = tool(async ({ path }) => `contents of ${path}`, {
  name: "read_file",
  description: "Read a file",
  schema: z.object({ path: z.string() }),
});
const agent = createAgent({
  model: "openai:gpt-4.1",
  tools: [readFile],
  systemPrompt: "You are a coding assistant.",
  middleware: [ctxkitLangChainMiddleware({ engine })],
  checkpointer: new MemorySaver(), // optional: ctxkit serves the thread's history from its store either way
});
const state = await agent.invoke(
  { messages: [{ role: "user", content: "What does src/index.ts export?" }] },
  { configurable: { thread_id: "repo-42" } },
);
console.log(state.messages.at(-1)?.text);

// A classic chain: the history is stored in the same engine, governed when it is read.
const chain = new RunnableWithMessageHistory({
  runnable: ChatPromptTemplate.fromMessages([
    ["system", "You are terse."],
    new MessagesPlaceholder("history"),
    ["human", "{question}"],
  ]).pipe(await initChatModel("openai:gpt-4.1")),
  getMessageHistory: (sessionId) => new CtxkitChatMessageHistory({ engine, sessionId }),
  inputMessagesKey: "question",
  historyMessagesKey: "history",
});
const reply = await chain.invoke(
  { question: "Where is my order?" },
  { configurable: { sessionId: "support-7" } },
);
console.log(reply.text);
