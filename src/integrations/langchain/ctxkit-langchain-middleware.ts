import { AIMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import type { JsonSchema7Type } from "@langchain/core/utils/json_schema";
import { tool, type ToolRunnableConfig } from "@langchain/core/tools";
import { createMiddleware, type AgentMiddleware } from "langchain";
import { runEngineTool } from "../../engine/engine-tool.ts";
import { sessionEngineTools } from "../../engine/session-engine-tools.ts";
import { RECALL_TOOL_NAME } from "../../governance/recall-tool.ts";
import type { ContextEngine } from "../../engine/context-engine.ts";
import type { PreparedRequest, ToolDefinition } from "../../engine/prepared-request.ts";
import { ValidationError } from "../../errors/errors.ts";
import type { JsonValue } from "../../model/message.ts";
import type { FeedItem, SessionFeed } from "../shared/session-feed.ts";
import { feedOf } from "./langchain-feeds.ts";
import { entryOf, originalMetadata, replyOf, toLangChain } from "./langchain-messages.ts";

/** What `sessionId` may read to name the session of a model call. */
export interface LangChainCallContext {
  readonly configurable?: { readonly thread_id?: string; readonly [key: string]: unknown };
  readonly context?: unknown;
}

/** Options of `ctxkitLangChainMiddleware`. */
export interface CtxkitLangChainMiddlewareOptions {
  /** The context engine: its store keeps every thread, its policy governs every model call. */
  engine: ContextEngine;
  /** The session of a model call. Default: the thread id (`configurable.thread_id`). */
  sessionId?: (call: LangChainCallContext) => string | undefined;
  /** Called with every governed request (its events, tokens and inspection) before the model sees it. */
  onRequest?: (request: PreparedRequest) => void;
}

/** The name `createAgent` gives the model's replies: its `name` option, else "model". */
function agentName(): string {
  const metadata = AsyncLocalStorageProviderSingleton.getRunnableConfig()?.metadata;
  const name = metadata?.["lc_agent_name"];
  return typeof name === "string" && name !== "" ? name : "model";
}

/** A message's key: LangGraph gives every message in the agent's state an id. */
function keyOf(message: BaseMessage): string {
  if (message.id !== undefined) return message.id;
  return `${message.type}:${JSON.stringify(message.content)}:${JSON.stringify(message.additional_kwargs)}`;
}

/** The definitions of the agent's tools, counted in every request (provider built-in tools as they are). */
function toolDefinitions(tools: readonly unknown[]): ToolDefinition[] {
  return tools.map((tool) => {
    const converted = convertToOpenAITool(tool as Record<string, unknown>);
    if (converted.type !== "function")
      return { name: "server-tool", inputSchema: converted as unknown as JsonValue };
    const { name, description, parameters } = converted.function;
    return {
      name,
      ...(description !== undefined && { description }),
      inputSchema: (parameters ?? {}) as JsonValue,
    };
  });
}

function toolNamer(messages: readonly BaseMessage[]): (callId: string) => string {
  return (callId) => {
    for (const message of messages) {
      if (!AIMessage.isInstance(message)) continue;
      const call = message.tool_calls?.find((candidate) => candidate.id === callId);
      if (call !== undefined) return call.name;
    }
    return "tool";
  };
}

/**
 * A LangChain v1 agent middleware (for `createAgent`) that governs every model call through a ctxkit session,
 * one per thread: the messages of the agent's state the session has not seen (the user's input, the step's tool
 * results) are recorded, the session prepares the governed request (old tool outputs truncated or offloaded,
 * the middle compacted into a summary when it pays, never more than the window), the model sees those governed
 * messages, and its reply is recorded and committed to the engine's store. The agent's own state is left as it
 * is. Messages governance did not touch go to the model as the very objects of the state, so the provider's
 * cached prefix holds; a thread resumed by a new process (or an agent without a checkpointer) is served its
 * history from the store.
 *
 * @example
 * ```ts
 * import { createAgent } from "langchain";
 * const engine = await createContextEngine({ store: await openSqliteSessionStore({ path: "agent.db" }), model: "gpt-4.1" });
 * const agent = createAgent({ model: "openai:gpt-4.1", tools, middleware: [ctxkitLangChainMiddleware({ engine })] });
 * await agent.invoke({ messages: [{ role: "user", content: "Fix the failing test" }] }, { configurable: { thread_id: "t-42" } });
 * ```
 */
export function ctxkitLangChainMiddleware(options: CtxkitLangChainMiddlewareOptions): AgentMiddleware {
  const sessionIdOf = options.sessionId ?? ((call: LangChainCallContext) => call.configurable?.thread_id);

  async function recordUnseen(
    feed: SessionFeed<BaseMessage>,
    messages: readonly BaseMessage[],
  ): Promise<void> {
    const history = messages.filter((message) => !SystemMessage.isInstance(message));
    const toolName = toolNamer(messages);
    const read = (message: BaseMessage) => {
      const entry = entryOf(message, toolName);
      return entry === undefined ? [] : [entry];
    };
    const unseen = await feed.unseen(history, (message) => AIMessage.isInstance(message), keyOf, read);
    const items: FeedItem<BaseMessage>[] = [];
    for (const message of unseen) {
      const entry = entryOf(message, toolName);
      if (entry !== undefined)
        items.push({
          entry,
          source: message,
          key: keyOf(message),
          metadata: originalMetadata(message, entry),
        });
    }
    await feed.record(items);
  }

  const sessionOf = (call: LangChainCallContext): string => {
    const sessionId = sessionIdOf(call);
    if (sessionId === undefined || sessionId === "")
      throw new ValidationError(
        "ctxkit needs a session for this model call: invoke the agent with `{ configurable: { thread_id } }` " +
          "or pass `sessionId` to ctxkitLangChainMiddleware",
      );
    return sessionId;
  };
  // `recall_tool_output` when the engine's notices name it: the agent offers it and runs it like its own tools.
  const recall = sessionEngineTools(options.engine.settings, "").find(
    (candidate) => candidate.definition.name === RECALL_TOOL_NAME,
  );
  const tools =
    recall === undefined
      ? []
      : [
          tool(
            async (input: JsonValue, config: ToolRunnableConfig) => {
              const own = options.engine
                .session(sessionOf(config as LangChainCallContext))
                .engineTools.find((candidate) => candidate.definition.name === RECALL_TOOL_NAME)!;
              const call = {
                type: "tool-call" as const,
                id: config.toolCall?.id ?? "",
                name: RECALL_TOOL_NAME,
                input,
              };
              return (await runEngineTool(own, call, config.signal ?? new AbortController().signal)).content;
            },
            {
              name: RECALL_TOOL_NAME,
              description: recall.definition.description ?? "",
              schema: recall.definition.inputSchema as JsonSchema7Type,
            },
          ),
        ];

  return createMiddleware({
    name: "CtxkitMiddleware",
    tools,
    wrapModelCall: async (request, handler) => {
      const sessionId = sessionOf(request.runtime);
      const feed = feedOf(options.engine, sessionId);
      await recordUnseen(feed, request.messages);
      const system = request.systemMessage.text;
      // A model call the provider refuses as too long is recovered from and sent again (`SessionTurn.send`); one
      // that fails leaves its turn open, uncommitted, for the agent's retry.
      const turn = await feed.session.begin();
      const { response } = await turn.send(
        async (prepared) => {
          options.onRequest?.(prepared);
          const messages = prepared.messages.map((message) => feed.original(message) ?? toLangChain(message));
          return handler({
            ...request,
            messages,
            // The engine adds sections (core memories) to the prompt only when it has memory: send them then.
            ...(prepared.system !== system.trim() && { systemMessage: new SystemMessage(prepared.system) }),
          });
        },
        {
          system: [{ name: "identity", content: system, heading: null }],
          tools: toolDefinitions(request.tools),
          ...(request.runtime.signal !== undefined && { signal: request.runtime.signal }),
        },
      );
      // The agent names its reply once the middleware returns it (`createAgent`'s `name`, default "model"):
      // named now, the reply is stored as the agent keeps it, and comes back so after a restart.
      const name = agentName();
      response.name = name;
      response.lc_kwargs["name"] = name;
      const reply = replyOf(response);
      await feed.reply(
        { ...reply, metadata: originalMetadata(response, { role: "assistant", reply }) },
        response,
      );
      return response;
    },
  });
}
