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
import OpenAI from "openai";
import { createContextEngine, type ContextEngine } from "../../src/engine/context-engine.ts";
import { startServer } from "../../src/server/start-server.ts";
import type { SessionStore } from "../../src/store/session-store.ts";
import { FakeSummarizer } from "../../src/test/fake-summarizer.ts";
import { FakeTokenCounter } from "../../src/test/fake-token-counter.ts";
import { contextLengthExceeded } from "../../src/test/fake-openai-responses.ts";
import { startFakeOpenAIServer } from "../../src/test/fake-openai-server.ts";
import { messageText } from "../../src/model/blocks.ts";
import type { JsonValue, Message } from "../../src/model/message.ts";
import { ctxkitSessionMiddleware } from "../../src/integrations/ai-sdk/session-middleware.ts";
import { ctxkitLangChainMiddleware } from "../../src/integrations/langchain/ctxkit-langchain-middleware.ts";
import { fileContent, type ScriptedModel, type ScriptedReply } from "./scripted-model.ts";
import { proxyAdapters } from "./proxy-adapters.ts";

/** One process's entry point: asks a question in a session, resolves with the final answer's text. */
export interface OpenAdapter {
  ask(session: string, question: string): Promise<string>;
  /** Ends the process (a server stops listening). */
  close?(): Promise<void>;
}

/** An entry point of ctxkit, as the suite drives it. */
export interface ConformanceAdapter {
  readonly name: string;
  /** The provider its replies must be recorded with: the model's (the upstream's). */
  readonly provider: string;
  /** Whether its agent can call `recall_tool_output` (a proxy's client runs its own tools: notices name none). */
  readonly recall: boolean;
  /** The id under which the store keeps session `session`. */
  storeId(session: string): string;
  /**
   * The entry point in a new process over `store`, talking to `model`. `kept` is what outlives the process on the
   * application's side (the app's messages, LangGraph's checkpointer).
   */
  open(store: SessionStore, model: ScriptedModel, kept: Map<string, unknown>): Promise<OpenAdapter>;
}

const PROVIDER = "scripted";
const own = (session: string) => session;

/** A small window: the files the questions read add up past it, so governance offloads and compacts. */
const engineSettings = () => ({
  contextWindow: 12_000,
  maxOutputTokens: 1_000,
  tokenCounter: new FakeTokenCounter(),
  summarizer: new FakeSummarizer(),
});

function engineOver(store: SessionStore): Promise<ContextEngine> {
  return createContextEngine({ store, ...engineSettings() });
}
const readFileInput = z.object({ path: z.string() });

function lastUserText(messages: readonly Message[]): string {
  const user = messages.findLast((message) => message.role === "user" && message.kind === undefined);
  return user === undefined ? "" : messageText(user);
}

/** `session.run()`: the engine drives the agent loop and answers its own tools. */
const run: ConformanceAdapter = {
  name: "session.run()",
  provider: PROVIDER,
  recall: true,
  storeId: own,
  open: async (store, model) => {
    const engine = await engineOver(store);
    return {
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
                  : [
                      {
                        type: "tool-call",
                        id: reply.call.id,
                        name: reply.call.name,
                        input: reply.call.input,
                      },
                    ],
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
    };
  },
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
  recall: true,
  storeId: own,
  async open(store, model, kept) {
    const engine = await engineOver(store);
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
  recall: true,
  storeId: own,
  async open(store, model, kept) {
    const engine = await engineOver(store);
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

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/** The text of a chat message's content: a string, or its text parts. */
function chatText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part: { text?: unknown }) => (typeof part.text === "string" ? part.text : "")).join("");
}

/** The proxy's `/v1/chat/completions` with `X-Ctxkit-Session`, in front of a loopback OpenAI-compatible upstream. */
const proxy: ConformanceAdapter = {
  name: "proxy /v1/chat/completions",
  provider: "openai-compatible",
  recall: false,
  storeId: own,
  async open(store, model) {
    let current = "";
    const upstream = await startFakeOpenAIServer({
      responses: ({ body }) => {
        const messages = body.messages ?? [];
        const last = messages.at(-1)!;
        let reply: ScriptedReply;
        try {
          reply = model.answer({
            session: current,
            last: last.role === "tool" ? "tool" : last.role === "assistant" ? "assistant" : "user",
            question: chatText(messages.findLast((message) => message.role === "user")?.content),
            wire: JSON.stringify({ messages, tools: body.tools }),
            tools: (body.tools ?? []).map(
              (definition) => (definition as { function: { name: string } }).function.name,
            ),
          });
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          return /maximum context length/.test(message)
            ? contextLengthExceeded()
            : { status: 503, error: { message, type: "server_error" } };
        }
        return "text" in reply
          ? { text: reply.text }
          : { toolCalls: [{ id: reply.call.id, name: reply.call.name, arguments: reply.call.input }] };
      },
    });
    const server = await startServer({
      store,
      port: 0,
      auth: false,
      upstream: { baseURL: upstream.url, apiKey: "sk-upstream", model: "fake-model" },
      engine: engineSettings(),
      unownedSessionsTenant: "local",
      log: () => {},
      webRoot: false,
    });
    const tools = [
      {
        type: "function" as const,
        function: {
          name: "read_file",
          description: "Reads a file",
          parameters: z.toJSONSchema(readFileInput),
        },
      },
    ];
    return {
      async ask(session, question) {
        current = session;
        const client = new OpenAI({
          baseURL: `${server.url}/v1`,
          apiKey: "none",
          maxRetries: 0,
          defaultHeaders: { "X-Ctxkit-Session": session },
        });
        // With X-Ctxkit-Session the client sends only what is new: the session holds the rest.
        let fresh: ChatMessage[] = [{ role: "user", content: question }];
        for (;;) {
          const completion = await client.chat.completions.create({
            model: "fake-model",
            messages: fresh,
            tools,
          });
          const message = completion.choices[0]!.message;
          const calls = (message.tool_calls ?? []).filter((call) => call.type === "function");
          if (calls.length === 0) return message.content ?? "";
          fresh = calls.map((call) => ({
            role: "tool" as const,
            tool_call_id: call.id,
            content: fileContent((JSON.parse(call.function.arguments) as { path: string }).path),
          }));
        }
      },
      async close() {
        await server.close();
        await upstream.close();
      },
    };
  },
};

/** Every entry point the suite runs over. */
export const adapters: readonly ConformanceAdapter[] = [run, aiSdk, langChain, proxy, ...proxyAdapters];
