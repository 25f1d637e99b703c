// README: a Mastra agent whose every step is governed by ctxkit, each thread kept in a ctxkit store.
// Type-checked by `npm test`.
import { Agent } from "@mastra/core/agent";
import { createTool } from "@mastra/core/tools";
import { z } from "zod";
import { createContextEngine } from "ctxkit";
import { CtxkitProcessor } from "ctxkit/mastra";
import { openSqliteSessionStore } from "ctxkit/sqlite";

const engine = await createContextEngine({
  store: await openSqliteSessionStore({ path: "agent.db" }),
  model: "gpt-4.1", // window, output limit, tokenizer and cache prices of the model the agent calls
});
const readFile = createTool({
  id: "read_file",
  description: "Read a file",
  inputSchema: z.object({ path: z.string() }),
  execute: async ({ path }) => `contents of ${path}`,
});
const agent = new Agent({
  id: "coder",
  name: "Coder",
  instructions: "You are a coding assistant.",
  model: "openai/gpt-4.1", // Mastra's model router (an AI SDK model works too)
  tools: { read_file: readFile },
  inputProcessors: [new CtxkitProcessor({ engine })],
});
const result = await agent.generate("What does src/index.ts export?", {
  maxSteps: 20,
  memory: { thread: "repo-42", resource: "user-7" }, // the thread is the ctxkit session
});
console.log(result.text);
