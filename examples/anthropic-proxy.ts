// docs/claude-code.md: ctxkit's server in front of Anthropic, from code, and an Anthropic SDK agent through it.
// Type-checked by `npm test`. (For Claude Code itself, two shell commands do the same: see docs/claude-code.md.)
import Anthropic from "@anthropic-ai/sdk";
import { MemoryKeyStore, startServer } from "ctxkit/server";
import { openSqliteSessionStore } from "ctxkit/sqlite";

const keys = new MemoryKeyStore();
const { key } = await keys.create("acme");
const server = await startServer({
  store: await openSqliteSessionStore({ path: "agents.db" }),
  keys,
  port: 0,
  anthropicUpstream: {
    baseURL: "https://api.anthropic.com/v1",
    apiKey: process.env["ANTHROPIC_API_KEY"]!,
    auth: "x-api-key",
  },
  engine: { model: "claude-sonnet-4-5" }, // sizes the governed window
});

// Any Messages API client: the session header makes ctxkit keep the conversation (omit it to govern statelessly).
const client = new Anthropic({
  baseURL: server.url,
  apiKey: key,
  defaultHeaders: { "X-Ctxkit-Session": "support-42" },
});
const message = await client.messages.create({
  model: "claude-sonnet-4-5",
  max_tokens: 1_024,
  messages: [{ role: "user", content: "Where is my order?" }],
});
console.log(message.content);
await server.close();
