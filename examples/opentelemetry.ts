// README: ctxkit's governance and store operations as OpenTelemetry spans and metrics, next to the AI SDK's
// `ai.*` spans. Type-checked by `npm test`.
import { openai } from "@ai-sdk/openai";
import { generateText } from "ai";
import { createContextEngine } from "ctxkit";
import { ctxkitTelemetry, instrumentStore } from "ctxkit/otel";
import { openSqliteSessionStore } from "ctxkit/sqlite";

// Register an OpenTelemetry SDK first (e.g. @opentelemetry/sdk-node with an OTLP exporter); without one every
// span and metric below is a no-op.
const telemetry = ctxkitTelemetry({ functionId: "support-agent" });
const model = openai("gpt-4.1");
const engine = await createContextEngine({
  store: instrumentStore(await openSqliteSessionStore({ path: "agent.db" }), { functionId: "support-agent" }),
  model,
  onEvent: telemetry.onEvent, // ctxkit.governance.* spans and metrics
});

const session = engine.session("support-42");
await session.addUser("Where is my order?");
const request = await session.prepare({ system: "You are a support agent." });
const reply = await generateText({ model, ...request.toAiSdk({ model }) });
await session.recordAssistant({
  content: reply.text,
  usage: { input: reply.usage.inputTokens ?? 0, output: reply.usage.outputTokens ?? 0 },
});
await session.commit();
