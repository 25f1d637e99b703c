import type { LanguageModelV4Message, LanguageModelV4Prompt } from "@ai-sdk/provider";
import type {
  ProcessAPIErrorArgs,
  ProcessAPIErrorResult,
  ProcessInputStepArgs,
  ProcessInputStepResult,
  ProcessLLMRequestArgs,
  ProcessLLMRequestResult,
  ProcessLLMResponseArgs,
  Processor,
} from "@mastra/core/processors";
import { MASTRA_THREAD_ID_KEY, type RequestContext } from "@mastra/core/request-context";
import type { JSONSchema7 } from "@ai-sdk/provider";
import { asSchema, jsonSchema, tool } from "ai";
import { runEngineTool, type EngineTool } from "../../engine/engine-tool.ts";
import type { ContextEngine } from "../../engine/context-engine.ts";
import type { PreparedRequest, ToolDefinition } from "../../engine/prepared-request.ts";
import { ValidationError } from "../../errors/errors.ts";
import { canonicalJson } from "../../model/blocks.ts";
import { AI_SDK_OPAQUE_PROVIDER } from "../../formats/providers/ai-sdk/opaque-parts.ts";
import type { ContentBlock, JsonValue, Message } from "../../model/message.ts";
import { sharedFeeds, type SessionFeed } from "../shared/session-feed.ts";
import { entriesOf, feedItemsOf, toPrompt } from "../shared/language-model-prompt.ts";
import { replyOfChunks } from "./mastra-prompt.ts";

/** What `sessionId` may read to name the session of an agent call. */
export interface MastraCallContext {
  readonly requestContext: RequestContext | undefined;
  /** The memory thread the call was given (`memory: { thread }`), when it was given one. */
  readonly threadId: string | undefined;
}

/** Options of `CtxkitProcessor`. */
export interface CtxkitProcessorOptions {
  /** The context engine: its store keeps every thread, its policy governs every step. */
  engine: ContextEngine;
  /**
   * The session of an agent call. Default: the thread in the request context (`MASTRA_THREAD_ID_KEY`), else the
   * memory thread of the call (`agent.generate(input, { memory: { thread, resource } })`).
   */
  sessionId?: (call: MastraCallContext) => string | undefined;
  /** Called with every governed request before the model sees it. */
  onRequest?: (request: PreparedRequest) => void;
}

/** What the processor keeps in Mastra's per-call `state` between the hooks of one agent call. */
interface CallState {
  feed?: SessionFeed<LanguageModelV4Message>;
  /** Prompt messages (system ones aside) already recorded in this call. */
  cursor?: number;
  tools?: ToolDefinition[];
  /** Ids of the calls the provider ran (a server tool): recorded with the reply, results included. */
  executed?: Set<string>;
}

/** Ids of the provider-executed tool calls in a reply (kept as the AI SDK's opaque parts). */
function executedCalls(content: string | readonly ContentBlock[]): string[] {
  if (typeof content === "string") return [];
  return content.flatMap((block) =>
    block.type === "opaque" &&
    block.provider === AI_SDK_OPAQUE_PROVIDER &&
    block.data["type"] === "tool-call" &&
    typeof block.data["toolCallId"] === "string"
      ? [block.data["toolCallId"]]
      : [],
  );
}

const feedOf = sharedFeeds<LanguageModelV4Message>();

/** What names an agent call's session: its request context and message list. */
type SessionArgs = Pick<ProcessLLMRequestArgs, "requestContext" | "messageList">;

/** One of the session's own tools as an AI SDK tool the agent runs (a failure it explains becomes its result). */
function mastraTool(engineTool: EngineTool) {
  const { name, description, inputSchema } = engineTool.definition;
  return tool({
    ...(description !== undefined && { description }),
    inputSchema: jsonSchema<JsonValue>((inputSchema ?? { type: "object" }) as JSONSchema7),
    execute: async (input: JsonValue, { toolCallId, abortSignal }) =>
      (
        await runEngineTool(
          engineTool,
          { type: "tool-call", id: toolCallId, name, input },
          abortSignal ?? new AbortController().signal,
        )
      ).content,
  });
}

function threadOf(args: SessionArgs): string | undefined {
  const fromContext = args.requestContext?.get(MASTRA_THREAD_ID_KEY);
  if (typeof fromContext === "string" && fromContext !== "") return fromContext;
  const memory = (args.messageList?.serialize() as { memoryInfo?: { threadId?: string } } | undefined)
    ?.memoryInfo;
  return memory?.threadId;
}

async function toolDefinitions(tools: Record<string, unknown>): Promise<ToolDefinition[]> {
  const definitions: ToolDefinition[] = [];
  for (const [name, tool] of Object.entries(tools)) {
    const { description, inputSchema } = tool as { description?: string; inputSchema?: unknown };
    const schema =
      inputSchema === undefined
        ? {}
        : await asSchema(inputSchema as Parameters<typeof asSchema>[0]).jsonSchema;
    definitions.push({
      name,
      ...(description !== undefined && { description }),
      inputSchema: schema as JsonValue,
    });
  }
  return definitions;
}

/**
 * A Mastra processor that governs every step of an agent through a ctxkit session, one per thread. Put it in
 * the agent's `inputProcessors`. Before each model call (`processLLMRequest`) the prompt's messages the session
 * has not seen (the user's input, the step's tool results) are recorded, the session prepares the governed
 * request (old tool outputs truncated or offloaded, the middle compacted into a summary when it pays, never more
 * than the window), and the model is sent that; after it (`processLLMResponse`) the reply is recorded and the
 * step committed to the engine's store. Mastra's message list and memory are left as they are: the governed
 * prompt lives for one call. A thread resumed by a new process (or an agent without memory) is served its
 * history from the store.
 *
 * @example
 * ```ts
 * const engine = await createContextEngine({ store: await openSqliteSessionStore({ path: "agent.db" }), model: "gpt-4.1" });
 * const agent = new Agent({ id: "support", name: "Support", instructions, model, tools, inputProcessors: [new CtxkitProcessor({ engine })] });
 * await agent.generate("Where is my order?", { memory: { thread: "support-42", resource: "user-7" } });
 * ```
 */
export class CtxkitProcessor implements Processor<"ctxkit"> {
  readonly id = "ctxkit";
  readonly name = "ctxkit context governance";
  readonly #options: CtxkitProcessorOptions;

  constructor(options: CtxkitProcessorOptions) {
    this.#options = options;
  }

  /**
   * Notes the step's tools (their definitions count against the window) and adds the session's own
   * (`recall_tool_output` when governance offloads, which its notices name): the agent runs them as any tool.
   */
  async processInputStep(args: ProcessInputStepArgs): Promise<ProcessInputStepResult | undefined> {
    const state = args.state as CallState;
    const feed = (state.feed ??= this.#feed(args));
    const given = args.tools ?? {};
    const own = feed.session.engineTools.filter((engineTool) => !(engineTool.definition.name in given));
    const tools = {
      ...given,
      ...Object.fromEntries(own.map((engineTool) => [engineTool.definition.name, mastraTool(engineTool)])),
    };
    state.tools = await toolDefinitions(tools);
    return own.length === 0 ? undefined : { tools };
  }

  async processLLMRequest(args: ProcessLLMRequestArgs): Promise<ProcessLLMRequestResult> {
    const state = args.state as CallState;
    const feed = (state.feed ??= this.#feed(args));
    const prompt = args.prompt as unknown as LanguageModelV4Prompt;
    const system = prompt.filter((message) => message.role === "system");
    const history = prompt.filter((message) => message.role !== "system");
    const key = (message: LanguageModelV4Message) => canonicalJson(message);
    // A later step's prompt adds the previous reply (recorded from its chunks) and its tool results.
    const unseen =
      state.cursor === undefined
        ? await feed.unseen(history, (message) => message.role === "assistant", key, entriesOf)
        : history.slice(state.cursor).filter((message) => message.role !== "assistant");
    // Mastra's prompt moves a provider-executed tool's result into a tool message; the reply holds it already.
    const executed = state.executed ?? new Set<string>();
    const items = unseen
      .flatMap(feedItemsOf)
      .filter(({ entry }) => entry.role !== "tool" || !executed.has(entry.result.callId));
    await feed.record(items);
    state.cursor = history.length;
    const instructions = system.map((message) => message.content).join("\n\n");
    const prepared = await feed.session.prepare({
      system: [{ name: "identity", content: instructions, heading: null }],
      tools: state.tools ?? [],
      ...(args.abortSignal !== undefined && { signal: args.abortSignal }),
    });
    this.#options.onRequest?.(prepared);
    const governed: Message[] = [...prepared.messages];
    const head: LanguageModelV4Prompt =
      prepared.system === instructions.trim() ? system : [{ role: "system", content: prepared.system }];
    const specification = typeof args.model === "object" ? args.model.specificationVersion : "v4";
    return { prompt: [...head, ...toPrompt(governed, specification)] as never };
  }

  /**
   * Records the step's reply, with the model's provider, and commits the step. A step that failed (an error chunk,
   * or no finish) takes its turn back instead: nothing of it is stored.
   */
  async processLLMResponse(args: ProcessLLMResponseArgs): Promise<undefined> {
    const state = args.state as CallState;
    const { feed } = state;
    if (feed === undefined) return undefined;
    if (
      args.chunks.some((chunk) => chunk.type === "error") ||
      !args.chunks.some((chunk) => chunk.type === "finish")
    ) {
      state.cursor = undefined;
      await feed.abandon();
      return undefined;
    }
    const model = typeof args.model === "object" ? args.model : undefined;
    const reply = {
      ...replyOfChunks(args.chunks, model?.modelId),
      ...(model !== undefined && { provider: model.provider }),
    };
    for (const id of executedCalls(reply.content)) (state.executed ??= new Set()).add(id);
    await feed.reply(reply, { role: "assistant", content: [] });
    return undefined;
  }

  /**
   * After the provider refused a call as too long for its window, the session recovers (its emergency stages) and
   * Mastra sends the call again, prepared anew; any other failure takes the turn back (nothing of it is stored).
   */
  async processAPIError(args: ProcessAPIErrorArgs): Promise<ProcessAPIErrorResult | undefined> {
    const state = args.state as CallState;
    const { feed } = state;
    if (feed === undefined) return undefined;
    if (args.retryCount === 0 && (await feed.session.recover(args.error, args.abortSignal)) !== undefined)
      return { retry: true };
    state.cursor = undefined;
    await feed.abandon();
    return undefined;
  }

  #feed(args: SessionArgs): SessionFeed<LanguageModelV4Message> {
    const call = { requestContext: args.requestContext, threadId: threadOf(args) };
    const sessionId = this.#options.sessionId?.(call) ?? call.threadId;
    if (sessionId === undefined || sessionId === "")
      throw new ValidationError(
        "ctxkit needs a session for this agent call: pass `memory: { thread, resource }` to generate/stream, " +
          "set MASTRA_THREAD_ID_KEY in the request context, or give CtxkitProcessor a `sessionId` function",
      );
    return feedOf(this.#options.engine, sessionId);
  }
}
