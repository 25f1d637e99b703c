// The README's quick start, type-checked by `npm test` (tsconfig includes examples/). Run it with an
// OPENAI_API_KEY: `npx node examples/quick-start.ts`.
import OpenAI from "openai";
import { createContextEngine } from "ctxkit";
import { openSqliteSessionStore } from "ctxkit/sqlite";

const openai = new OpenAI();
const store = await openSqliteSessionStore({ path: "agent.db" });
const engine = await createContextEngine({ store, model: "gpt-4.1" });
const session = engine.session("support-42"); // resumed from agent.db after a restart

await session.addUser("Why did last night's deploy fail?");
const request = await session.prepare({ system: "You are an SRE agent." });
console.log(request.tokens, request.inspection.channels); // what the model will see, per channel
const response = await openai.chat.completions.create({ model: "gpt-4.1", messages: request.toOpenAIChat() });
await session.recordAssistant({
  content: response.choices[0]?.message.content ?? "",
  usage: { input: response.usage?.prompt_tokens ?? 0, output: response.usage?.completion_tokens ?? 0 },
});
await session.commit(); // one transaction per turn: a crash loses nothing that was committed
