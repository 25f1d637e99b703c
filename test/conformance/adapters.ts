// The entry points of the adapter conformance suite, each a thin adapter over a session turn, driven the way its
// users drive it against one scripted model.
import type { LanguageModelV4CallOptions, LanguageModelV4GenerateResult } from "@ai-sdk/provider";
import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { MemorySaver } from "@langchain/langgraph";
import { generateText, stepCountIs, tool as aiTool, wrapLanguageModel, type ModelMessage } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { createAgent, tool as langChainTool } from "langchain";
import { z } from "zod";
import type { ContextEngine } from "../../src/engine/context-engine.ts";
import { messageText } from "../../src/model/blocks.ts";
import type { JsonValue, Message } from "../../src/model/message.ts";
import { ctxkitSessionMiddleware } from "../../src/integrations/ai-sdk/session-middleware.ts";
import { ctxkitLangChainMiddleware } from "../../src/integrations/langchain/ctxkit-langchain-middleware.ts";
import { fileContent, type ScriptedModel, type ScriptedReply } from "./scripted-model.ts";

/** One process's entry point: asks a question in a session, resolves with the final answer's text. */
export interface OpenAdapter {
  ask(session: string, question: string): Promise<string>;
}

/** An entry point of ctxkit, as the suite drives it. */
export interface ConformanceAdapter {
  readonly name: string;
  /** The provider its replies must be recorded with: the model's. */
  readonly provider: string;
  /**
   * The entry point in a new process over `engine`, talking to `model`. `kept` is what outlives the process on the
   * application's side (the AI SDK app's messages, LangGraph's checkpointer).
   */
  open(engine: ContextEngine, model: ScriptedModel, kept: Map<string, unknown>): OpenAdapter;
}

const PROVIDER = "scripted";
const readFileInput = z.object({ path: z.string() });

function lastUserText(messages: readonly Message[]): string {
  const user = messages.findLast((message) => message.role === "user" && message.kind === undefined);
  return user === undefined ? "" : messageText(user);
}

/** `session.run()`: the engine drives the agent loop and answers its own tools. */
const run: ConformanceAdapter = {
  name: "session.run()",
  provider: PROVIDER,
  open: (engine, model) => ({
    async ask(session, question) {
      const result = await engine.session(session).run(
        question,
        async (request) => {
          const reply = model.answer({
            session,
            last: request.messages.at(-1)!.role as "user" | "assistant" | "tool",
            question: lastUserText(request.messages),
            wire: JSON.stringify({ messages: request.toOpenAIChat(), tools: request.tools }),
            tools: request.tools.map((definition) => definition.name),
          });
          return {
            provider: PROVIDER,
            content:
              "text" in reply
                ? reply.text
                : [{ type: "tool-call", id: reply.call.id, name: reply.call.name, input: reply.call.input }],
          };
        },
        {
          tools: [
            {
              name: "read_file",
              description: "Reads a file",
              inputSchema: z.toJSONSchema(readFileInput) as JsonValue,
            },
          ],
          executeTool: async (call) => ({ content: fileContent((call.input as { path: string }).path) }),
        },
      );
      return result.reply === undefined ? "" : messageText(result.reply);
    },
  }),
};

function aiSdkResult(reply: ScriptedReply): LanguageModelV4GenerateResult {
  const usage = {
    inputTokens: { total: 100, noCache: 100, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 10, text: 10, reasoning: 0 },
  };
  return "text" in reply
    ? {
        content: [{ type: "text", text: reply.text }],
        finishReason: { unified: "stop", raw: "stop" },
        usage,
        warnings: [],
      }
    : {
        content: [
          {
            type: "tool-call",
            toolCallId: reply.call.id,
            toolName: reply.call.name,
            input: JSON.stringify(reply.call.input),
          },
        ],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage,
        warnings: [],
      };
}

function promptText(message: LanguageModelV4CallOptions["prompt"][number]): string {
  if (typeof message.content === "string") return message.content;
  return message.content.map((part) => (part.type === "text" ? part.text : "")).join("");
}

/** `ctxkitSessionMiddleware`: the app keeps its messages and sends them all; one wrapped model serves every chat. */
const aiSdk: ConformanceAdapter = {
  name: "AI SDK ctxkitSessionMiddleware",
  provider: PROVIDER,
  open(engine, model, kept) {
    let current = "";
    const mock = new MockLanguageModelV4({
      provider: PROVIDER,
      modelId: "scripted-1",
      doGenerate: async (options) => {
        const last = options.prompt.at(-1)!;
        return aiSdkResult(
          model.answer({
            session: current,
            last: last.role === "system" ? "user" : last.role,
            question: promptText(options.prompt.findLast((message) => message.role === "user")!),
            wire: JSON.stringify({ prompt: options.prompt, tools: options.tools }),
            tools: (options.tools ?? []).map((definition) => definition.name),
          }),
        );
      },
    });
    const wrapped = wrapLanguageModel({ model: mock, middleware: ctxkitSessionMiddleware({ engine }) });
    const readFile = aiTool({
      description: "Reads a file",
      inputSchema: readFileInput,
      execute: async ({ path }) => fileContent(path),
    });
    return {
      async ask(session, question) {
        current = session;
        const messages = (kept.get(session) as ModelMessage[] | undefined) ?? [];
        const asked: ModelMessage = { role: "user", content: question };
        const result = await generateText({
          model: wrapped,
          tools: { read_file: readFile },
          messages: [...messages, asked],
          stopWhen: stepCountIs(6),
          maxRetries: 0,
          providerOptions: { ctxkit: { sessionId: session } },
        });
        kept.set(session, [...messages, asked, ...result.response.messages]);
        return result.text;
      },
    };
  },
};

function langChainText(message: BaseMessage): string {
  return typeof message.content === "string" ? message.content : JSON.stringify(message.content);
}

/** `ctxkitLangChainMiddleware` in `createAgent`, its state in a checkpointer that outlives the process. */
const langChain: ConformanceAdapter = {
  name: "LangChain ctxkitLangChainMiddleware",
  provider: PROVIDER,
  open(engine, model, kept) {
    let current = "";
    const fake = fakeModel();
    for (let call = 0; call < 500; call++)
      fake.respond((messages) => {
        const last = messages.at(-1)!;
        let reply: ScriptedReply;
        try {
          reply = model.answer({
            session: current,
            last: ToolMessage.isInstance(last) ? "tool" : AIMessage.isInstance(last) ? "assistant" : "user",
            question: langChainText(messages.findLast((message) => message.type === "human")!),
            // LangGraph gives messages random ids, which providers never see: the rest is what is sent.
            wire: JSON.stringify(
              messages.map((message) => ({
                ...message.toDict(),
                data: { ...message.toDict().data, id: undefined },
              })),
            ),
            tools: [],
          });
        } catch (error) {
          return error as Error;
        }
        const response_metadata = { model_provider: PROVIDER };
        return "text" in reply
          ? new AIMessage({ content: reply.text, response_metadata })
          : new AIMessage({
              content: "",
              tool_calls: [{ id: reply.call.id, name: reply.call.name, args: reply.call.input }],
              response_metadata,
            });
      });
    let checkpointer = kept.get("checkpointer") as MemorySaver | undefined;
    if (checkpointer === undefined) kept.set("checkpointer", (checkpointer = new MemorySaver()));
    const readFile = langChainTool(async ({ path }: { path: string }) => fileContent(path), {
      name: "read_file",
      description: "Reads a file",
      schema: readFileInput,
    });
    const agent = createAgent({
      model: fake,
      tools: [readFile],
      middleware: [ctxkitLangChainMiddleware({ engine })],
      checkpointer,
    });
    return {
      async ask(session, question) {
        current = session;
        const state = await agent.invoke(
          { messages: [{ role: "user", content: question }] },
          { configurable: { thread_id: session } },
        );
        return langChainText(state.messages.at(-1)!);
      },
    };
  },
};

/** Every entry point the suite runs over. */
export const adapters: readonly ConformanceAdapter[] = [run, aiSdk, langChain];
