// README: govern every step of a Vercel AI SDK agent loop. Type-checked by `npm test`.
import { openai } from "@ai-sdk/openai";
import { generateText, stepCountIs, tool } from "ai";
import { z } from "zod";
import { counterForModel, createExtractiveSummarizer, preset } from "ctxkit";
import { ctxkitPrepareStep } from "ctxkit/ai-sdk";

const tools = {
  bash: tool({
    description: "Run a shell command",
    inputSchema: z.object({ command: z.string() }),
    execute: async ({ command }) => `ran ${command}`,
  }),
};
const counter = await counterForModel("gpt-4.1");
const prepareStep = ctxkitPrepareStep({
  contextWindow: 128_000,
  counter,
  summarizer: createExtractiveSummarizer(),
  pipeline: preset("default", { pricing: "openai" }), // rewrite history when it pays at OpenAI's cache prices
  tools,
});
const result = await generateText({
  model: openai("gpt-4.1"),
  tools,
  prepareStep,
  onEnd: prepareStep.onEnd, // commits the call's last reply (no later step brings it)
  prompt: "Fix the failing test",
  stopWhen: stepCountIs(50),
});
console.log(result.text);
