// README: an OpenAI Agents SDK Session on a ctxkit store, governed before the runner sees it. Type-checked by `npm test`.
import { Agent, run } from "@openai/agents";
import { counterForModel, createExtractiveSummarizer, preset } from "ctxkit";
import { CtxkitAgentsSession } from "ctxkit/openai-agents";
import { openSqliteSessionStore } from "ctxkit/sqlite";

const store = await openSqliteSessionStore({ path: "agent.db" });
const session = new CtxkitAgentsSession({
  store,
  sessionId: "support-42",
  contextWindow: 128_000,
  counter: await counterForModel("gpt-4.1"),
  summarizer: createExtractiveSummarizer(),
  pipeline: preset("default", { pricing: "openai" }), // rewrite history when it pays at OpenAI's cache prices
});
// The model governance was sized for (the SDK's own default model otherwise).
const agent = new Agent({ name: "Support", instructions: "Help the customer.", model: "gpt-4.1" });
// The filter governs every model call of the run too (a long tool run piles up outputs between calls).
const result = await run(agent, "Where is my order?", {
  session,
  callModelInputFilter: session.callModelInputFilter,
});
console.log(result.finalOutput);
