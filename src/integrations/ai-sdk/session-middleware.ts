import type {
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4FinishReason,
  LanguageModelV4Message,
  LanguageModelV4Middleware,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
} from "@ai-sdk/provider";
import type { JSONSchema7 } from "@ai-sdk/provider";
import { z } from "zod";
import type { AssistantInput } from "../../conversation/conversation.ts";
import type { ContextEngine } from "../../engine/context-engine.ts";
import type { PreparedRequest, ToolDefinition } from "../../engine/prepared-request.ts";
import { ValidationError } from "../../errors/errors.ts";
import {
  withPromptCaching,
  type PromptCachingOptions,
} from "../../formats/providers/ai-sdk/prompt-caching.ts";
import { ephemeralTail } from "../../formats/providers/anthropic/ephemeral-tail.ts";
import { canonicalJson } from "../../model/blocks.ts";
import type { JsonValue, Usage } from "../../model/message.ts";
import {
  entriesOf,
  feedItemsOf,
  mergedMetadata,
  providerToolOutput,
  toPrompt,
  type ProviderMetadata,
} from "../shared/language-model-prompt.ts";
import { sharedFeeds, type SessionFeed } from "../shared/session-feed.ts";

/** Options of `ctxkitSessionMiddleware`. */
export interface CtxkitSessionMiddlewareOptions extends PromptCachingOptions {
  /** The context engine: its store keeps every session, its policy governs every call. */
  engine: ContextEngine;
  /**
   * The session of a call that names none in `providerOptions.ctxkit.sessionId`. Without it, such a call is
   * refused: one wrapped model serves many conversations, and mixing them up would be worse than an error.
   */
  defaultSessionId?: string;
  /** Called with every governed request before the model sees it. */
  onRequest?: (request: PreparedRequest) => void;
}

const callOptionsSchema = z.object({
  sessionId: z
    .string()
    .min(1, "providerOptions.ctxkit.sessionId is empty")
    .max(256, "providerOptions.ctxkit.sessionId is longer than 256 characters"),
});

const feedOf = sharedFeeds<LanguageModelV4Message>();

/** The call's session id, and its provider options without ctxkit's own (providers never see them). */
function sessionOf(
  params: LanguageModelV4CallOptions,
  fallback: string | undefined,
): { sessionId: string; providerOptions: LanguageModelV4CallOptions["providerOptions"] } {
  const { ctxkit, ...providerOptions } = params.providerOptions ?? {};
  if (ctxkit === undefined) {
    if (fallback === undefined)
      throw new ValidationError(
        "ctxkit needs a session for this model call: pass providerOptions: { ctxkit: { sessionId } } to " +
          "generateText/streamText, or give ctxkitSessionMiddleware a defaultSessionId",
      );
    return { sessionId: fallback, providerOptions: params.providerOptions };
  }
  const parsed = callOptionsSchema.safeParse(ctxkit);
  if (!parsed.success)
    throw new ValidationError(
      `providerOptions.ctxkit is invalid: ${parsed.error.issues.map((issue) => issue.message).join("; ")}`,
    );
  return {
    sessionId: parsed.data.sessionId,
    ...(Object.keys(providerOptions).length > 0 && { providerOptions }),
  } as { sessionId: string; providerOptions: LanguageModelV4CallOptions["providerOptions"] };
}

function toolDefinitions(tools: LanguageModelV4CallOptions["tools"]): ToolDefinition[] {
  return (tools ?? []).map((tool) =>
    tool.type === "function"
      ? {
          name: tool.name,
          ...(tool.description !== undefined && { description: tool.description }),
          inputSchema: tool.inputSchema as JsonValue,
        }
      : { name: tool.name },
  );
}

function usageOf(usage: LanguageModelV4Usage | undefined): Usage | undefined {
  const input = usage?.inputTokens.total;
  if (usage === undefined || input === undefined) return undefined;
  const { cacheRead, cacheWrite } = usage.inputTokens;
  const reasoning = usage.outputTokens.reasoning;
  return {
    input,
    output: usage.outputTokens.total ?? 0,
    ...(cacheRead ? { cacheRead } : {}),
    ...(cacheWrite ? { cacheWrite } : {}),
    ...(reasoning ? { reasoning } : {}),
  };
}

function parsedInput(input: string): unknown {
  try {
    return JSON.parse(input);
  } catch {
    return input;
  }
}

type AssistantPart = Extract<LanguageModelV4Message, { role: "assistant" }>["content"][number];

/**
 * A part of the model's reply as the assistant prompt part the AI SDK makes of it: text, reasoning, tool calls
 * (provider-executed ones too) and the results of provider-executed tools, generated files, custom parts. Sources
 * and preliminary results are not part of the prompt, and tool approval requests are not supported.
 */
function promptPartsOf(part: OpenPart | LanguageModelV4Content): AssistantPart[] {
  const providerOptions = "providerMetadata" in part ? part.providerMetadata : undefined;
  const extra = providerOptions !== undefined ? { providerOptions } : {};
  switch (part.type) {
    case "text":
      return part.text === "" ? [] : [{ type: "text", text: part.text, ...extra }];
    case "reasoning":
      return [{ type: "reasoning", text: part.text, ...extra }];
    case "tool-call":
      return [
        {
          type: "tool-call",
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          input: parsedInput(part.input),
          ...(part.providerExecuted === true && { providerExecuted: true }),
          ...extra,
        },
      ];
    case "tool-result":
      if (part.preliminary === true) return [];
      return [
        {
          type: "tool-result",
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          output: providerToolOutput(part.result, part.isError),
          ...extra,
        },
      ];
    case "file":
    case "reasoning-file":
      return [{ type: part.type, data: part.data, mediaType: part.mediaType, ...extra }];
    case "custom":
      return [{ type: "custom", kind: part.kind, ...extra }];
    case "source":
    case "tool-approval-request":
      return [];
  }
}

/** The model's reply as the assistant message the next call's prompt will hold, and what the session records. */
function replyOf(
  content: readonly (OpenPart | LanguageModelV4Content)[],
  details: {
    usage?: LanguageModelV4Usage;
    finishReason?: LanguageModelV4FinishReason;
    model: string;
    provider: string;
  },
): { message: LanguageModelV4Message; reply: AssistantInput } {
  const message: LanguageModelV4Message = { role: "assistant", content: content.flatMap(promptPartsOf) };
  const entry = entriesOf(message).find((candidate) => candidate.role === "assistant");
  const usage = usageOf(details.usage);
  return {
    message,
    reply: {
      content: entry?.role === "assistant" ? entry.reply.content : [],
      model: details.model,
      provider: details.provider,
      ...(usage !== undefined && { usage }),
      ...(details.finishReason !== undefined && { finishReason: details.finishReason.unified }),
    },
  };
}

/** A text or reasoning part being streamed. */
interface OpenPart {
  readonly type: "text" | "reasoning";
  text: string;
  providerMetadata?: ProviderMetadata;
}

/**
 * Collects a streamed reply's parts into the content a non-streamed call would have returned. A text or
 * reasoning part's provider metadata may come on its start (Anthropic's redacted thinking), on a delta (its
 * thinking signature) or on its end: all of it is kept.
 */
class StreamedReply {
  readonly content: (OpenPart | LanguageModelV4Content)[] = [];
  usage: LanguageModelV4Usage | undefined;
  finishReason: LanguageModelV4FinishReason | undefined;
  readonly #open = new Map<string, OpenPart>();

  add(part: LanguageModelV4StreamPart): void {
    switch (part.type) {
      case "text-start":
      case "reasoning-start": {
        const open: OpenPart = { type: part.type === "text-start" ? "text" : "reasoning", text: "" };
        if (part.providerMetadata !== undefined) open.providerMetadata = part.providerMetadata;
        this.#open.set(`${open.type}:${part.id}`, open);
        this.content.push(open);
        break;
      }
      case "text-delta":
      case "reasoning-delta":
      case "text-end":
      case "reasoning-end": {
        const open = this.#open.get(`${part.type.startsWith("text") ? "text" : "reasoning"}:${part.id}`);
        if (open === undefined) break;
        if ("delta" in part) open.text += part.delta;
        const metadata = mergedMetadata(open.providerMetadata, part.providerMetadata);
        if (metadata !== undefined) open.providerMetadata = metadata;
        break;
      }
      case "tool-call":
      case "tool-result":
      case "file":
      case "reasoning-file":
      case "custom":
        this.content.push(part);
        break;
      case "finish":
        this.usage = part.usage;
        this.finishReason = part.finishReason;
        break;
    }
  }
}

/**
 * How a middleware call finds the session it is a turn of: named by the call (`ctxkitSessionMiddleware`), or the
 * one memory-backed session its prompt continues (`ctxkitMiddleware`).
 */
export interface MiddlewareSessions {
  /** The engine the sessions belong to (its counter counts for prompt caching). */
  readonly engine: ContextEngine;
  /**
   * The feed of the call's session, given the call and its prompt without system messages, and the provider
   * options to send (ctxkit's own removed).
   */
  feedFor(
    params: LanguageModelV4CallOptions,
    history: readonly LanguageModelV4Message[],
  ): Promise<{ feed: SessionFeed<LanguageModelV4Message>; providerOptions: ProviderOptions }>;
  /** OpenAI's prompt-cache key for a prepared request (none when undefined). */
  cacheKey(request: PreparedRequest): string | undefined;
  /** Called with every governed request before the model sees it. */
  readonly onRequest?: ((request: PreparedRequest) => void) | undefined;
}

type ProviderOptions = LanguageModelV4CallOptions["providerOptions"];
type Model = Parameters<NonNullable<LanguageModelV4Middleware["transformParams"]>>[0]["model"];
type StreamResult = Awaited<ReturnType<Model["doStream"]>>;

/**
 * An AI SDK language-model middleware that is a thin adapter over ctxkit's session core: one wrapped model
 * serves any number of conversations, each a session of the engine's store named per call by
 * `providerOptions: { ctxkit: { sessionId } }`. Before each model call the prompt's messages the session has not
 * recorded (the user's input, the step's tool results) are recorded and the session prepares the governed request
 * (truncation, offloading, compaction, pre-flight; Anthropic breakpoints or OpenAI's cache key as configured); the
 * model's reply is recorded and committed — with the governor's state, in one transaction — once it is complete
 * (streamed or not). So interleaved conversations never share a view, and a restarted process continues each
 * one from the store with the same governed prefix (the provider's cache stays warm). A provider overflow error
 * is recovered from (the session's emergency stages) and retried once. The session's own tools
 * (`recall_tool_output` when governance offloads) are offered with the call's and answered by the session,
 * streamed or not.
 *
 * @example
 * ```ts
 * const engine = await createContextEngine({ store: await openSqliteSessionStore({ path: "agent.db" }), model: "gpt-4.1" });
 * const model = wrapLanguageModel({ model: openai("gpt-4.1"), middleware: ctxkitSessionMiddleware({ engine }) });
 * await generateText({ model, tools, prompt, providerOptions: { ctxkit: { sessionId: "chat-42" } } });
 * ```
 */
export function ctxkitSessionMiddleware(options: CtxkitSessionMiddlewareOptions): LanguageModelV4Middleware {
  const { engine } = options;
  return sessionMiddleware(
    {
      engine,
      async feedFor(params) {
        const { sessionId, providerOptions } = sessionOf(params, options.defaultSessionId);
        return { feed: feedOf(engine, sessionId), providerOptions };
      },
      cacheKey: (request) => request.sessionId,
      onRequest: options.onRequest,
    },
    options,
  );
}

/**
 * A language-model middleware whose every call is a turn of the session `sessions` finds for it (see
 * `ctxkitSessionMiddleware`, `ctxkitMiddleware`).
 */
export function sessionMiddleware(
  sessions: MiddlewareSessions,
  caching: PromptCachingOptions,
): LanguageModelV4Middleware {
  const calls = new WeakMap<
    LanguageModelV4CallOptions,
    { feed: SessionFeed<LanguageModelV4Message>; providerOptions: ProviderOptions }
  >();

  /** The call to the model with the governed request in place of the prompt, and the model's cache hints. */
  function governed(
    original: LanguageModelV4CallOptions,
    prepared: PreparedRequest,
    providerOptions: ProviderOptions,
    model: Model,
  ): LanguageModelV4CallOptions {
    const system = original.prompt.filter((message) => message.role === "system");
    const instructions = system.map((message) => message.content).join("\n\n");
    const head: LanguageModelV4Prompt =
      prepared.system === instructions.trim() ? system : [{ role: "system", content: prepared.system }];
    // The session's own tools it offered (`recall_tool_output`) go last: the middleware answers their calls itself.
    const own = prepared.tools.filter(
      (tool) => !(original.tools ?? []).some((given) => given.name === tool.name),
    );
    const given = [
      ...(original.tools ?? []),
      ...own.map((tool) => ({
        type: "function" as const,
        name: tool.name,
        ...(tool.description !== undefined && { description: tool.description }),
        inputSchema: tool.inputSchema as JSONSchema7,
      })),
    ];
    const cached = withPromptCaching(
      {
        system: head,
        messages: toPrompt(prepared.messages, "v4"),
        ...(given.length > 0 && { tools: given }),
        providerOptions,
      },
      {
        ...caching,
        model,
        sessionId: sessions.cacheKey(prepared),
        ephemeralTail: ephemeralTail(prepared.messages),
        countTokens: (text) => sessions.engine.settings.counter.countText(text),
      },
    );
    const { providerOptions: _dropped, ...rest } = original;
    const tools = cached.tools ?? given;
    return {
      ...rest,
      prompt: [...cached.system, ...cached.messages],
      ...(tools.length > 0 && { tools }),
      ...(cached.providerOptions !== undefined && { providerOptions: cached.providerOptions }),
    };
  }

  /**
   * Sends the call as a turn of its session (`SessionTurn.send`: governed, after a provider overflow recovered and
   * sent again, and the session's own tools answered).
   */
  async function send<T>(
    params: LanguageModelV4CallOptions,
    model: Model,
    call: (params: LanguageModelV4CallOptions, engineTools: ReadonlySet<string>) => PromiseLike<T>,
    reply: (result: T) => AssistantInput | undefined,
  ): Promise<{ result: T; feed: SessionFeed<LanguageModelV4Message> }> {
    const entry = calls.get(params);
    if (entry === undefined)
      throw new ValidationError("ctxkit middleware: a call its transformParams did not see");
    const { feed, providerOptions } = entry;
    const instructions = params.prompt
      .filter((message) => message.role === "system")
      .map((message) => message.content)
      .join("\n\n");
    const given = new Set((params.tools ?? []).map((tool) => tool.name));
    const engineTools = new Set(
      feed.session.engineTools.map((tool) => tool.definition.name).filter((name) => !given.has(name)),
    );
    // A call that fails leaves its turn open, uncommitted: the application's retry continues it, and what it
    // recorded is not recorded twice.
    const turn = await feed.session.begin();
    const { response } = await turn.send(
      async (request) => {
        sessions.onRequest?.(request);
        return call(governed(params, request, providerOptions, model), engineTools);
      },
      {
        system: [{ name: "identity", content: instructions, heading: null }],
        tools: toolDefinitions(params.tools),
        ...(params.abortSignal !== undefined && { signal: params.abortSignal }),
        reply,
      },
    );
    return { result: response, feed };
  }

  return {
    specificationVersion: "v4",
    async transformParams({ params }) {
      const history = params.prompt.filter((message) => message.role !== "system");
      const { feed, providerOptions } = await sessions.feedFor(params, history);
      const unseen = await feed.unseen(
        history,
        (message) => message.role === "assistant",
        canonicalJson,
        entriesOf,
      );
      await feed.record(unseen.flatMap(feedItemsOf));
      const { providerOptions: _ctxkit, ...rest } = params;
      const call = { ...rest, ...(providerOptions !== undefined && { providerOptions }) };
      calls.set(call, { feed, providerOptions });
      return call;
    },
    async wrapGenerate({ params, model }) {
      const details = (result: Awaited<ReturnType<typeof model.doGenerate>>) => ({
        usage: result.usage,
        finishReason: result.finishReason,
        model: model.modelId,
        provider: model.provider,
      });
      const { result, feed } = await send(
        params,
        model,
        (governed) => model.doGenerate(governed),
        (result) => replyOf(result.content, details(result)).reply,
      );
      const { message, reply } = replyOf(result.content, details(result));
      await feed.reply(reply, message);
      return result;
    },
    async wrapStream({ params, model }) {
      // A streamed reply is read up to its first part meant for the caller: a reply that turns out to call only
      // the session's own tools is answered by the session, and the caller sees the stream that follows.
      const { result, feed } = await send(
        params,
        model,
        async (governed, engineTools) => peeked(await model.doStream(governed), engineTools),
        (peek) =>
          peek.complete === undefined
            ? undefined
            : replyOf(peek.complete.content, {
                ...(peek.complete.usage !== undefined && { usage: peek.complete.usage }),
                ...(peek.complete.finishReason !== undefined && { finishReason: peek.complete.finishReason }),
                model: model.modelId,
                provider: model.provider,
              }).reply,
      );
      const collected = new StreamedReply();
      let failed = false;
      const recorder = new TransformStream<LanguageModelV4StreamPart, LanguageModelV4StreamPart>({
        transform(part, controller) {
          if (part.type === "error") failed = true;
          collected.add(part);
          controller.enqueue(part);
        },
        async flush() {
          // A reply cut off by an error is not committed: the next call's prompt brings what the agent kept.
          if (failed || collected.finishReason === undefined) return;
          const { message, reply } = replyOf(collected.content, {
            ...(collected.usage !== undefined && { usage: collected.usage }),
            finishReason: collected.finishReason,
            model: model.modelId,
            provider: model.provider,
          });
          await feed.reply(reply, message);
        },
      });
      return { ...result.result, stream: result.stream.pipeThrough(recorder) };
    },
  };
}

/** A streamed model call read up to its first part meant for the caller (see `peeked`). */
interface PeekedStream {
  readonly result: StreamResult;
  /** The whole stream: the parts read so far, then the rest. */
  readonly stream: ReadableStream<LanguageModelV4StreamPart>;
  /** The reply, when the stream ended before any part meant for the caller (only the session's own tools called). */
  readonly complete: StreamedReply | undefined;
}

/** True for a part the caller must see: text, a call of one of its tools, a file, a source, an error. */
function forCaller(part: LanguageModelV4StreamPart, engineTools: ReadonlySet<string>): boolean {
  switch (part.type) {
    case "text-delta":
      return part.delta !== "";
    case "tool-input-start":
    case "tool-call":
      return !engineTools.has(part.toolName);
    case "stream-start":
    case "response-metadata":
    case "text-start":
    case "text-end":
    case "reasoning-start":
    case "reasoning-delta":
    case "reasoning-end":
    case "tool-input-delta":
    case "tool-input-end":
    case "finish":
    case "raw":
      return false;
    default:
      return true;
  }
}

/**
 * Reads `result`'s stream until a part meant for the caller (then the stream goes on as it was) or its end (then
 * it is complete: a reply calling only the session's own tools, or an empty one). Without session tools nothing is
 * read ahead.
 */
async function peeked(result: StreamResult, engineTools: ReadonlySet<string>): Promise<PeekedStream> {
  if (engineTools.size === 0) return { result, stream: result.stream, complete: undefined };
  const reader = result.stream.getReader();
  const read: LanguageModelV4StreamPart[] = [];
  for (;;) {
    const next = await reader.read();
    if (next.done) {
      const complete = new StreamedReply();
      for (const part of read) complete.add(part);
      return { result, stream: replayed(read, undefined), complete };
    }
    read.push(next.value);
    if (forCaller(next.value, engineTools))
      return { result, stream: replayed(read, reader), complete: undefined };
  }
}

/** A stream of `parts`, then what `rest` still holds. */
function replayed(
  parts: readonly LanguageModelV4StreamPart[],
  rest: ReadableStreamDefaultReader<LanguageModelV4StreamPart> | undefined,
): ReadableStream<LanguageModelV4StreamPart> {
  let index = 0;
  return new ReadableStream({
    async pull(controller) {
      if (index < parts.length) return controller.enqueue(parts[index++]!);
      const next = rest === undefined ? { done: true as const } : await rest.read();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    cancel: (reason) => rest?.cancel(reason),
  });
}
