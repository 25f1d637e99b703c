// The entry points of the adapter conformance suite, each a thin adapter over a session turn, driven the way its
// users drive it against one scripted model.
import {
  APICallError,
  type LanguageModelV4CallOptions,
  type LanguageModelV4GenerateResult,
  type LanguageModelV4Middleware,
} from "@ai-sdk/provider";
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { Agent as MastraAgent } from "@mastra/core/agent";
import { MASTRA_THREAD_ID_KEY, RequestContext } from "@mastra/core/request-context";
import { createTool } from "@mastra/core/tools";
import {
  Agent as AgentsAgent,
  run as runAgent,
  setTracingDisabled,
  tool as agentsTool,
  Usage as AgentsUsage,
  type Model as AgentsModel,
} from "@openai/agents";
import { fakeModel } from "@langchain/core/testing";
import { MemorySaver } from "@langchain/langgraph";
import {
  generateText,
  stepCountIs,
  tool as aiTool,
  wrapLanguageModel,
  type ModelMessage,
  type ToolSet,
} from "ai";
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
import { ctxkitMiddleware } from "../../src/integrations/ai-sdk/middleware.ts";
import { ctxkitPrepareStep } from "../../src/integrations/ai-sdk/prepare-step.ts";
import { ctxkitSessionMiddleware } from "../../src/integrations/ai-sdk/session-middleware.ts";
import { ctxkitSessionSteps } from "../../src/integrations/ai-sdk/session-steps.ts";
import { memoryEngineOf } from "../../src/integrations/shared/memory-engine.ts";
import { CtxkitChatMessageHistory } from "../../src/integrations/langchain/ctxkit-chat-message-history.ts";
import { CtxkitProcessor } from "../../src/integrations/mastra/ctxkit-processor.ts";
import { CtxkitAgentsSession } from "../../src/integrations/openai-agents/ctxkit-session.ts";
import { ctxkitLangChainMiddleware } from "../../src/integrations/langchain/ctxkit-langchain-middleware.ts";
import { fileContent, type ScriptedModel, type ScriptedReply } from "./scripted-model.ts";
import { proxyAdapters } from "./proxy-adapters.ts";

/** One process's entry point: asks a question in a session, resolves with the final answer's text. */
export interface OpenAdapter {
  ask(session: string, question: string): Promise<string>;
  /** Ends the process (a server stops listening). */
  close?(): Promise<void>;
  /**
   * Every message the process has stored of `session`, when that is not the suite's store: a memory-backed
   * adapter's own session (committed messages only).
   */
  stored?(session: string): Promise<readonly Message[]>;
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
  /**
   * The checks that cannot apply to this entry point, each with why; the suite asserts the nearest thing that can
   * fail instead. `restart`: nothing outlives the process (memory-backed). `overflow`: the framework makes the
   * model call, so the adapter never sees the provider's error.
   */
  readonly inapplicable?: {
    readonly restart?: string;
    readonly overflow?: string;
    /** The replies cannot name their provider: the suite asserts they name none rather than a wrong one. */
    readonly provider?: string;
  };
}

const PROVIDER = "scripted";

setTracingDisabled(true);
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

/** How an AI SDK adapter governs `generateText`: a middleware around the model, or step hooks. */
interface AiSdkGoverning {
  readonly middleware?: LanguageModelV4Middleware;
  /** The options to spread into `generateText` for a conversation, and what to await after it. */
  steps?(session: string): { options: object; settled?(): Promise<void> };
  readonly stored?: (session: string) => Promise<readonly Message[]>;
}

/**
 * An AI SDK entry point driven by `generateText`: the app keeps its messages and sends them all; one model (and
 * one governing object, `governing`) serves every chat of the process.
 */
function aiSdkAdapter(
  adapter: Omit<ConformanceAdapter, "open" | "provider" | "storeId"> & {
    readonly storeId?: (session: string) => string;
    readonly governing: (store: SessionStore, tools: ToolSet) => Promise<AiSdkGoverning>;
  },
): ConformanceAdapter {
  const { governing, ...rest } = adapter;
  return {
    provider: PROVIDER,
    storeId: own,
    ...rest,
    async open(store, model, kept) {
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
      const readFile = aiTool({
        description: "Reads a file",
        inputSchema: readFileInput,
        execute: async ({ path }) => fileContent(path),
      });
      const tools = { read_file: readFile };
      const governed = await governing(store, tools);
      const wrapped =
        governed.middleware === undefined
          ? mock
          : wrapLanguageModel({ model: mock, middleware: governed.middleware });
      return {
        async ask(session, question) {
          current = session;
          const messages = (kept.get(session) as ModelMessage[] | undefined) ?? [];
          const asked: ModelMessage = { role: "user", content: question };
          const steps = governed.steps?.(session);
          const result = await generateText({
            model: wrapped,
            tools,
            messages: [...messages, asked],
            stopWhen: stepCountIs(6),
            maxRetries: 0,
            providerOptions: { ctxkit: { sessionId: session } },
            ...steps?.options,
          });
          await steps?.settled?.();
          // Every step's messages (`response.messages` holds the last step's once prepareStep rewrote them).
          kept.set(session, [...messages, asked, ...result.responseMessages]);
          return result.text;
        },
        ...(governed.stored !== undefined && { stored: governed.stored }),
      };
    },
  };
}

/** `ctxkitSessionMiddleware`: a session per chat of the engine's store, named by each call. */
const aiSdk = aiSdkAdapter({
  name: "AI SDK ctxkitSessionMiddleware",
  recall: true,
  governing: async (store) => ({ middleware: ctxkitSessionMiddleware({ engine: await engineOver(store) }) }),
});

/** The governor's options `ctxkitMiddleware` and `ctxkitPrepareStep` take: the engine settings of the others. */
const governorSettings = () => {
  const { tokenCounter, ...rest } = engineSettings();
  return { ...rest, counter: tokenCounter };
};

/** What a memory-backed adapter committed of its one session. */
function memoryStored(owner: object, id: string): () => Promise<readonly Message[]> {
  return async () => {
    const engine = memoryEngineOf(owner)!;
    return (await engine.settings.store.getSession(id)) === undefined
      ? []
      : engine.settings.store.loadMessages(id, { strategy: "all" });
  };
}

const MEMORY_BACKED =
  "memory-backed: the session lives in the process, so a restarted one governs the app's kept messages anew";

/** `ctxkitMiddleware`: the raw middleware, one memory-backed session per process that each prompt continues or restarts. */
const rawMiddleware = aiSdkAdapter({
  name: "AI SDK ctxkitMiddleware (memory-backed)",
  recall: true,
  storeId: () => "ai-sdk",
  inapplicable: { restart: MEMORY_BACKED },
  governing: async () => {
    const middleware = ctxkitMiddleware(governorSettings());
    return { middleware, stored: memoryStored(middleware, "ai-sdk") };
  },
});

/** `ctxkitPrepareStep`: the raw prepareStep, one memory-backed session per process. */
const prepareStep = aiSdkAdapter({
  name: "AI SDK ctxkitPrepareStep (memory-backed)",
  recall: false,
  storeId: () => "ai-sdk",
  inapplicable: {
    restart: MEMORY_BACKED,
    overflow: "prepareStep never sees the provider call: the SDK makes it and its error goes to the caller",
  },
  governing: async (_store, tools) => {
    const step = ctxkitPrepareStep({ ...governorSettings(), tools });
    // `onEnd` commits each call's last reply (no later step brings it).
    return {
      steps: () => ({ options: { prepareStep: step, onEnd: step.onEnd } }),
      stored: memoryStored(step, "ai-sdk"),
    };
  },
});

/** `ctxkitSessionSteps`: prepareStep and onStepFinish over a session of the engine's store, one per call. */
const sessionSteps = aiSdkAdapter({
  name: "AI SDK ctxkitSessionSteps",
  // prepareStep cannot answer the session's tools: its engine is made without recall, so notices name none.
  recall: false,
  inapplicable: {
    overflow: "prepareStep never sees the provider call: the SDK makes it and its error goes to the caller",
  },
  governing: async (store, tools) => {
    const engine = await createContextEngine({ store, ...engineSettings(), recall: false });
    return {
      steps: (session) => {
        const steps = ctxkitSessionSteps({ engine, sessionId: session, tools });
        return { options: steps, settled: () => steps.settled() };
      },
    };
  },
});

function langChainText(message: BaseMessage): string {
  return typeof message.content === "string" ? message.content : JSON.stringify(message.content);
}

/** LangChain's fake chat model answering as `model` scripts, for the session `current` names. */
function langChainFake(model: ScriptedModel, current: { session: string }) {
  const fake = fakeModel();
  for (let call = 0; call < 500; call++)
    fake.respond((messages) => {
      const last = messages.at(-1)!;
      let reply: ScriptedReply;
      try {
        reply = model.answer({
          session: current.session,
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
  return fake;
}

/** `ctxkitLangChainMiddleware` in `createAgent`, its state in a checkpointer that outlives the process. */
const langChain: ConformanceAdapter = {
  name: "LangChain ctxkitLangChainMiddleware",
  provider: PROVIDER,
  recall: true,
  storeId: own,
  async open(store, model, kept) {
    const engine = await engineOver(store);
    const current = { session: "" };
    const fake = langChainFake(model, current);
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
        current.session = session;
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

/**
 * `CtxkitChatMessageHistory` under a classic chain's loop: the app reads the governed history, calls the model and
 * runs the tools itself, then adds the turn's messages.
 */
const langChainHistory: ConformanceAdapter = {
  name: "LangChain CtxkitChatMessageHistory",
  provider: PROVIDER,
  // The chain runs its own tools: its engine is made without recall, so notices name none.
  recall: false,
  storeId: own,
  inapplicable: {
    overflow: "the chain calls the model: the history only hands out messages and never sees its error",
  },
  async open(store, model) {
    const engine = await createContextEngine({ store, ...engineSettings(), recall: false });
    const current = { session: "" };
    const fake = langChainFake(model, current);
    return {
      async ask(session, question) {
        current.session = session;
        const history = new CtxkitChatMessageHistory({ engine, sessionId: session });
        const past = await history.getMessages();
        const turn: BaseMessage[] = [new HumanMessage(question)];
        for (;;) {
          const reply = await fake.invoke([...past, ...turn]);
          turn.push(reply);
          const calls = reply.tool_calls ?? [];
          if (calls.length === 0) break;
          for (const call of calls)
            turn.push(
              new ToolMessage({
                tool_call_id: call.id!,
                name: call.name,
                content: fileContent((call.args as { path: string }).path),
              }),
            );
        }
        await history.addMessages(turn);
        return langChainText(turn.at(-1)!);
      },
    };
  },
};

/** Mastra's `CtxkitProcessor` as an agent's input processor; the thread named by the request context. */
const mastra: ConformanceAdapter = {
  name: "Mastra CtxkitProcessor",
  provider: PROVIDER,
  recall: true,
  storeId: own,
  async open(store, model) {
    const engine = await engineOver(store);
    let current = "";
    const mock = new MockLanguageModelV4({
      provider: PROVIDER,
      modelId: "scripted-1",
      doGenerate: async (options) => {
        const last = options.prompt.at(-1)!;
        try {
          return aiSdkResult(
            model.answer({
              session: current,
              last: last.role === "system" ? "user" : last.role,
              question: promptText(options.prompt.findLast((message) => message.role === "user")!),
              // Mastra stamps each part with its time (`providerOptions.mastra.createdAt`), which no provider is
              // sent: the rest is what is sent.
              wire: JSON.stringify({ prompt: options.prompt, tools: options.tools }, (key, value: unknown) =>
                key === "mastra" ? undefined : value,
              ),
              tools: (options.tools ?? []).map((definition) => definition.name),
            }),
          );
        } catch (error) {
          // As an AI SDK provider throws it: an API rejection, retryable unless it is the request's own fault.
          const status = (error as { status?: number }).status ?? 503;
          throw new APICallError({
            message: (error as Error).message,
            url: "http://127.0.0.1/v1/chat/completions",
            requestBodyValues: {},
            statusCode: status,
            isRetryable: status >= 500,
            data: { error: { code: (error as { code?: string }).code } },
          });
        }
      },
    });
    const processor = new CtxkitProcessor({ engine });
    const agent = new MastraAgent({
      id: "reader",
      name: "Reader",
      instructions: "You read files.",
      // Mastra types models against its own copy of the provider spec; the mock is the same v4 interface.
      model: mock as never,
      tools: {
        read_file: createTool({
          id: "read_file",
          description: "Reads a file",
          inputSchema: readFileInput,
          execute: async ({ path }) => fileContent(path),
        }),
      },
      inputProcessors: [processor],
      // Mastra asks only its error processors about a rejected call: there the session recovers from an overflow.
      errorProcessors: [processor],
      maxProcessorRetries: 1,
    });
    return {
      async ask(session, question) {
        current = session;
        const requestContext = new RequestContext();
        requestContext.set(MASTRA_THREAD_ID_KEY, session);
        const result = await agent.generate(question, {
          maxSteps: 6,
          requestContext,
          modelSettings: { maxRetries: 0 },
        });
        if (result.error !== undefined) throw result.error;
        return result.text;
      },
    };
  },
};

/** `CtxkitAgentsSession` with its `callModelInputFilter` under the OpenAI Agents SDK's `run`. */
const openAiAgents: ConformanceAdapter = {
  name: "OpenAI Agents SDK CtxkitAgentsSession",
  provider: PROVIDER,
  // The runner runs the agent's tools: the session cannot answer its own, so notices name none.
  recall: false,
  storeId: own,
  inapplicable: {
    overflow: "the runner calls the model: the session only hands out items and never sees its error",
    provider: "the runner stores items, which do not say which provider answered",
  },
  async open(store, model) {
    let current = "";
    const scripted: AgentsModel = {
      async getResponse(request) {
        const input =
          typeof request.input === "string"
            ? [{ role: "user" as const, content: request.input }]
            : request.input;
        const last = input.at(-1)!;
        const user = input.findLast((item) => "role" in item && item.role === "user");
        const reply = model.answer({
          session: current,
          last:
            last.type === "function_call_result"
              ? "tool"
              : "role" in last && last.role === "user"
                ? "user"
                : "assistant",
          question:
            user !== undefined && "content" in user && typeof user.content === "string" ? user.content : "",
          wire: JSON.stringify({ input, tools: request.tools }),
          tools: request.tools.map((definition) => definition.name),
        });
        const usage = new AgentsUsage({ requests: 1, inputTokens: 100, outputTokens: 10, totalTokens: 110 });
        return {
          usage,
          output:
            "text" in reply
              ? [
                  {
                    type: "message",
                    role: "assistant",
                    status: "completed",
                    content: [{ type: "output_text", text: reply.text }],
                  },
                ]
              : [
                  {
                    type: "function_call",
                    callId: reply.call.id,
                    name: reply.call.name,
                    status: "completed",
                    arguments: JSON.stringify(reply.call.input),
                  },
                ],
        };
      },
      // eslint-disable-next-line require-yield -- the runner is only used non-streamed here
      async *getStreamedResponse() {
        throw new Error("not used");
      },
    };
    const agent = new AgentsAgent({
      name: "reader",
      instructions: "Read, then answer.",
      model: scripted,
      tools: [
        agentsTool({
          name: "read_file",
          description: "Reads a file",
          parameters: readFileInput,
          execute: async ({ path }) => fileContent(path),
        }),
      ],
    });
    const sessions = new Map<string, CtxkitAgentsSession>();
    return {
      async ask(session, question) {
        current = session;
        let governed = sessions.get(session);
        if (governed === undefined) {
          governed = new CtxkitAgentsSession({ store, sessionId: session, ...governorSettings() });
          sessions.set(session, governed);
        }
        const result = await runAgent(agent, question, {
          session: governed,
          callModelInputFilter: governed.callModelInputFilter,
          maxTurns: 6,
        });
        return String(result.finalOutput ?? "");
      },
    };
  },
};

/** Every entry point the suite runs over. */
export const adapters: readonly ConformanceAdapter[] = [
  run,
  aiSdk,
  rawMiddleware,
  prepareStep,
  sessionSteps,
  langChain,
  langChainHistory,
  mastra,
  openAiAgents,
  proxy,
  ...proxyAdapters,
];
