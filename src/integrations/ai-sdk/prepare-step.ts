import {
  asSchema,
  type Instructions,
  type LanguageModel,
  type ModelMessage,
  type SystemModelMessage,
  type ToolSet,
} from "ai";
import type { ProviderOptions } from "../../formats/providers/ai-sdk/ai-sdk-types.ts";
import {
  withPromptCaching,
  type PromptCachingOptions,
} from "../../formats/providers/ai-sdk/prompt-caching.ts";
import { toAiSdk, type AiSdkOptions } from "../../formats/providers/ai-sdk/to-ai-sdk.ts";
import { ephemeralTail } from "../../formats/providers/anthropic/ephemeral-tail.ts";
import type { PreparedRequest, ToolDefinition } from "../../engine/prepared-request.ts";
import { ValidationError } from "../../errors/errors.ts";
import type { Governor, GovernorOptions } from "../../governance/governor.ts";
import { canonicalJson } from "../../model/blocks.ts";
import type { JsonValue, Message } from "../../model/message.ts";
import { feedItemsOf } from "../shared/language-model-prompt.ts";
import { memoryEngine } from "../shared/memory-engine.ts";
import { sharedFeeds } from "../shared/session-feed.ts";

/**
 * Options of `ctxkitPrepareStep`: the governor's, plus the session id, the tools, prompt caching and a hook per
 * request.
 */
export interface CtxkitPrepareStepOptions extends GovernorOptions, AiSdkOptions, PromptCachingOptions {
  /**
   * Stamped on the converted messages (events and memory entries carry it); when given, it is also OpenAI's
   * prompt-cache key (`promptCacheKey`). Default "ai-sdk".
   */
  sessionId?: string;
  /**
   * The tools given to `generateText`/`streamText`: their definitions are counted as part of every request.
   * Without them only the instructions and messages are counted.
   */
  tools?: ToolSet;
  /** Called with every governed request (e.g. to log its events or inspect it). */
  onRequest?: (request: PreparedRequest) => void;
}

/**
 * What `ctxkitPrepareStep` reads of the SDK's `prepareStep` options (any tool set's options have these), so the
 * function fits `generateText`/`streamText` whatever the tools.
 */
export interface PrepareStepInput {
  /** The step's model: its provider decides the prompt-cache hints (none without it). */
  readonly model?: LanguageModel;
  readonly steps: readonly {
    readonly usage: { readonly inputTokens: number | undefined; readonly outputTokens?: number | undefined };
  }[];
  readonly stepNumber: number;
  readonly instructions: Instructions | undefined;
  readonly messages: ModelMessage[];
}

/** What `ctxkitPrepareStep` returns for a step: the governed messages, and the prompt-cache hints. */
export interface PreparedStep {
  messages: ModelMessage[];
  /** The instructions with Anthropic's system breakpoint, when one was set. */
  instructions?: SystemModelMessage[];
  /** OpenAI's `promptCacheKey`, when set. */
  providerOptions?: ProviderOptions;
}

/** What `CtxkitPrepareStep.onEnd` reads of the SDK's end-of-call event (`generateText`'s and `streamText`'s). */
export interface PrepareStepEndEvent {
  /** Every response message of the call, in order: the last step's are those no step was prepared with. */
  readonly responseMessages: readonly ModelMessage[];
  /** The last step (its usage: the event's own `usage` sums every step's). */
  readonly finalStep: {
    readonly usage: { readonly inputTokens: number | undefined; readonly outputTokens?: number | undefined };
  };
}

/**
 * The `prepareStep` function (it returns the governed `messages` of the step), with the governor of the session
 * behind it (its view, offload store and policy; read once the first step was prepared), and `onEnd`, which
 * commits the call's last reply.
 */
export type CtxkitPrepareStep = ((step: PrepareStepInput) => Promise<PreparedStep>) & {
  readonly governor: Governor;
  /**
   * Pass it as `onEnd` of `generateText`/`streamText`: it records and commits the last step's reply (and its tool
   * results), which no later step brings. Without it, that reply is recorded when the next call of the chat sends
   * it back in its messages (a chat the app never continues leaves it unstored).
   */
  readonly onEnd: (event: PrepareStepEndEvent) => Promise<void>;
};

function instructionList(instructions: Instructions | undefined): SystemModelMessage[] {
  if (instructions === undefined) return [];
  if (typeof instructions === "string")
    return instructions === "" ? [] : [{ role: "system", content: instructions }];
  return Array.isArray(instructions) ? instructions : [instructions];
}

/** The text of a step's instructions (system messages joined). */
export function instructionText(instructions: Instructions | undefined): string {
  if (instructions === undefined) return "";
  if (typeof instructions === "string") return instructions;
  const list = Array.isArray(instructions) ? instructions : [instructions];
  return list.map((message) => message.content).join("\n\n");
}

/** The JSON of a tool set's definitions as a provider receives them (for counting). */
export async function toolDefinitions(tools: ToolSet): Promise<string> {
  const definitions = [];
  for (const [name, tool] of Object.entries(tools)) {
    const inputSchema = await asSchema(tool.inputSchema).jsonSchema;
    definitions.push({ type: "function", name, description: tool.description, inputSchema });
  }
  return JSON.stringify(definitions);
}

/** A tool set's definitions as a session's request offers them (none without tools). */
export async function sessionToolDefinitions(tools: ToolSet | undefined): Promise<ToolDefinition[]> {
  if (tools === undefined) return [];
  const definitions = JSON.parse(await toolDefinitions(tools)) as {
    name: string;
    description?: string;
    inputSchema: JsonValue;
  }[];
  return definitions.map((tool) => ({
    name: tool.name,
    ...(tool.description !== undefined && { description: tool.description }),
    inputSchema: tool.inputSchema,
  }));
}

const feedOf = sharedFeeds<ModelMessage>();

/**
 * A `prepareStep` function for `generateText`/`streamText` that applies ctxkit governance to every step of an
 * agent loop, without a store of yours: each step is a turn of one memory-backed session (the session core every
 * entry point uses), which holds the conversation the steps send. A step records what it adds (the previous step's
 * reply and tool results, a new call's new messages) and sends the governed request in place of its messages
 * (truncation, offloading, compaction, pre-flight); messages governance did not touch go out as the very objects
 * the SDK holds, so the prompt cache keeps hitting between checkpoints. The provider's reported input tokens of
 * each step are recorded with its reply, so later decisions are anchored on them. Keep one per conversation:
 * reusing it for the next `generateText` call of the same chat (with the earlier messages passed again)
 * continues the same governed view; a call whose messages do not continue it starts the session over.
 *
 * When the step's model is an Anthropic one, the instructions and the two newest stable messages carry cache
 * breakpoints (`providerOptions.anthropic.cacheControl`, on copies); for an OpenAI model given a `sessionId`,
 * the step's `providerOptions.openai.promptCacheKey` is that id (see `PromptCachingOptions`).
 *
 * System messages among the step's messages (`allowSystemInMessages`) are kept: sent first, with the instructions
 * they are counted with, as ctxkit's other AI SDK paths send them. Pass `prepareStep.onEnd` as the call's `onEnd`
 * to commit the call's last reply as soon as the call ends.
 *
 * Unlike `ctxkitMiddleware`, it sees the SDK's own messages (`ModelMessage`) and never the provider call, so it
 * cannot retry after a provider overflow error, nor answer the session's own tools: its offload notices say to
 * run the tool again (`recall` is off unless set). Combine it with `ctxkitMiddleware`, or use
 * `ctxkitSessionSteps`, when that matters.
 *
 * @example
 * ```ts
 * const prepareStep = ctxkitPrepareStep({ contextWindow: 128_000, counter, summarizer, tools });
 * await generateText({ model, tools, prompt: "Fix the failing test", prepareStep, onEnd: prepareStep.onEnd, stopWhen: stepCountIs(50) });
 * ```
 */
export function ctxkitPrepareStep(options: CtxkitPrepareStepOptions): CtxkitPrepareStep {
  const prepareStep = async (step: PrepareStepInput): Promise<PreparedStep> => {
    const instructions =
      marked !== undefined && marked.returned === step.instructions ? marked.original : step.instructions;
    await record(await fresh(step.messages), step);
    if (step.stepNumber === 0) firstLength = step.messages.length;
    last = step;
    const session = feedOf(engine, id).session;
    governor = await session.governor();
    provider = typeof step.model === "object" ? step.model.provider : undefined;
    const inline = step.messages.filter((message) => message.role === "system");
    const request = await session.prepare({
      system: [instructionText(instructions), ...inline.map((message) => message.content)].map(
        (content, index) => ({ name: index === 0 ? "identity" : `system-${index}`, content, heading: null }),
      ),
      tools: await (tools ??= sessionToolDefinitions(options.tools)),
    });
    options.onRequest?.(request);
    const system = instructionList(instructions);
    const cached = withPromptCaching(
      { system, messages: restore(request.messages) },
      {
        ...options,
        model: step.model,
        sessionId: options.sessionId,
        ephemeralTail: ephemeralTail(request.messages),
        countTokens: (text) => options.counter.countText(text),
      },
    );
    returned = [...inline, ...cached.messages];
    // Once instructions were returned, the SDK keeps sending them: return them every step from then on, so a
    // breakpoint never outlives the step it was planned for.
    const override =
      marked !== undefined || cached.system.some((message, index) => message !== system[index]);
    if (override) marked = { returned: cached.system, original: instructions };
    return {
      messages: returned,
      ...(override && { instructions: cached.system }),
      ...(cached.providerOptions !== undefined && { providerOptions: cached.providerOptions }),
    };
  };
  const engine = memoryEngine({ ...options, recall: options.recall ?? false }, prepareStep);
  const id = options.sessionId ?? "ai-sdk";
  let tools: Promise<ToolDefinition[]> | undefined;
  /** How many messages the call's first step had, and the call's last step prepared (until `onEnd`). */
  let firstLength = 0;
  let last: PrepareStepInput | undefined;
  let governor: Governor | undefined;
  /** The conversation the session holds, as the SDK's messages, and the session messages each was recorded as. */
  let sources: ModelMessage[] = [];
  let groups: (readonly Message[])[] = [];
  /** Where each recorded message's source stands in `sources`. */
  let positions = new WeakMap<Message, number>();
  let returned: ModelMessage[] | undefined;
  /** The instructions last returned, and the caller's they stand for (the SDK hands them back next step). */
  let marked: { returned: SystemModelMessage[]; original: Instructions | undefined } | undefined;
  /** The provider of the model the last step was sent to: its reply comes in the next step's messages. */
  let provider: string | undefined;

  /**
   * The step's messages not recorded yet: what it appended to our last answer, or (in a new `generateText` call
   * of the chat) what follows the conversation the session holds. Any other list starts the session over.
   */
  const fresh = async (messages: readonly ModelMessage[]): Promise<ModelMessage[]> => {
    if (
      returned !== undefined &&
      messages.length >= returned.length &&
      returned.every((message, index) => messages[index] === message)
    )
      return messages.slice(returned.length);
    const held =
      messages.length >= sources.length &&
      sources.every(
        (source, index) =>
          messages[index] === source || canonicalJson(messages[index]) === canonicalJson(source),
      );
    if (held) {
      // A new call passes copies: they stand for what the session holds from now on.
      sources = messages.slice(0, sources.length);
      return messages.slice(sources.length);
    }
    await engine.settings.store.deleteSession(id);
    engine.release(id);
    sources = [];
    groups = [];
    positions = new WeakMap();
    return [...messages];
  };

  /**
   * Records `messages`: the previous steps' replies (with the last one's usage) and tool results are committed, for
   * their model call succeeded; the new user input after them stays in the open turn until its own reply comes
   * (a failed call leaves nothing of its turn stored).
   */
  const record = async (messages: readonly ModelMessage[], step: PrepareStepInput): Promise<void> => {
    const feed = feedOf(engine, id);
    const last = step.stepNumber > 0 ? step.steps.at(-1)?.usage : undefined;
    const add = async (list: readonly ModelMessage[]) => {
      const items = list.flatMap(feedItemsOf).map((item) => {
        if (item.entry.role !== "assistant") return item;
        const usage =
          last?.inputTokens === undefined
            ? {}
            : { usage: { input: last.inputTokens, output: last.outputTokens ?? 0 } };
        const reply = { ...item.entry.reply, ...(provider !== undefined && { provider }), ...usage };
        return { ...item, entry: { role: "assistant" as const, reply } };
      });
      const recorded = await feed.record(items);
      let at = 0;
      for (const message of list) {
        const count = items.slice(at).findIndex((item) => item.source !== message);
        const group = recorded.slice(at, count < 0 ? recorded.length : at + count);
        at += group.length;
        for (const part of group) positions.set(part, sources.length);
        sources.push(message);
        groups.push(group);
      }
    };
    const input = messages.findLastIndex((message) => message.role !== "user") + 1;
    await add(messages.slice(0, input));
    if (input > 0) await feed.commit();
    await add(messages.slice(input));
  };

  /**
   * Governed messages back as the SDK's: a source whose every recorded message is still there, unchanged and in a
   * row, goes out as the very object the SDK holds; anything governance rewrote (or added) is converted.
   */
  const restore = (governed: readonly Message[]): ModelMessage[] => {
    const output: ModelMessage[] = [];
    let pending: Message[] = [];
    const flush = () => {
      if (pending.length > 0)
        output.push(...toAiSdk(pending, { ...options, references: "placeholder" }).messages);
      pending = [];
    };
    for (let index = 0; index < governed.length;) {
      const position = positions.get(governed[index]!);
      const group = position === undefined ? undefined : groups[position];
      if (group !== undefined && group.length > 0 && group.every((m, at) => governed[index + at] === m)) {
        flush();
        output.push(sources[position!]!);
        index += group.length;
        continue;
      }
      pending.push(governed[index++]!);
    }
    flush();
    return output;
  };

  /** Records the last step's reply (the response messages no step was prepared with) and commits it. */
  const onEnd = async (event: PrepareStepEndEvent): Promise<void> => {
    const step = last;
    if (step === undefined) return;
    last = undefined;
    const replies = event.responseMessages.slice(step.messages.length - firstLength);
    const messages = [...step.messages, ...replies];
    await record(await fresh(messages), {
      ...step,
      messages,
      stepNumber: step.stepNumber + 1,
      steps: [...step.steps, { usage: event.finalStep.usage }],
    });
  };

  return Object.defineProperties(prepareStep, {
    governor: {
      get(): Governor {
        if (governor === undefined)
          throw new ValidationError(
            "ctxkitPrepareStep: its governor exists once the first step was prepared",
          );
        return governor;
      },
    },
    onEnd: { value: onEnd },
  }) as CtxkitPrepareStep;
}
