import {
  asSchema,
  type Instructions,
  type LanguageModel,
  type ModelMessage,
  type SystemModelMessage,
  type ToolSet,
} from "ai";
import type { ProviderOptions } from "../../formats/providers/ai-sdk/ai-sdk-types.ts";
import { fromAiSdk } from "../../formats/providers/ai-sdk/from-ai-sdk.ts";
import {
  withPromptCaching,
  type PromptCachingOptions,
} from "../../formats/providers/ai-sdk/prompt-caching.ts";
import { toAiSdk, type AiSdkOptions } from "../../formats/providers/ai-sdk/to-ai-sdk.ts";
import { ephemeralTail } from "../../formats/providers/anthropic/ephemeral-tail.ts";
import {
  Governor,
  type GovernedRequest,
  type GovernorOptions,
  type RequestTokens,
} from "../../governance/governor.ts";
import type { Message } from "../../model/message.ts";

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
  onRequest?: (request: GovernedRequest) => void;
}

/**
 * What `ctxkitPrepareStep` reads of the SDK's `prepareStep` options (any tool set's options have these), so the
 * function fits `generateText`/`streamText` whatever the tools.
 */
export interface PrepareStepInput {
  /** The step's model: its provider decides the prompt-cache hints (none without it). */
  readonly model?: LanguageModel;
  readonly steps: readonly { readonly usage: { readonly inputTokens: number | undefined } }[];
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

/**
 * The `prepareStep` function (it returns the governed `messages` of the step), with the governor behind it
 * (its view, offload store and policy).
 */
export type CtxkitPrepareStep = ((step: PrepareStepInput) => Promise<PreparedStep>) & {
  readonly governor: Governor;
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

/**
 * The messages a step would send as ctxkit messages, converted once per `ModelMessage` object (so ids, seq
 * numbers and token counts stay put while the agent loop grows the list at its end).
 */
class MessageBridge {
  readonly #sessionId: string;
  readonly #options: AiSdkOptions;
  readonly #converted = new WeakMap<ModelMessage, readonly Message[]>();
  readonly #origin = new WeakMap<Message, ModelMessage>();
  #nextSeq = 0;
  #turn = 0;
  #nextId = 0;

  constructor(sessionId: string, options: AiSdkOptions) {
    this.#sessionId = sessionId;
    this.#options = options;
  }

  /**
   * Lets `source` stand for `known`, an equal message seen before (the SDK hands out copies of earlier steps'
   * messages in its results), so it keeps the same ctxkit messages. Returns whether they were equal.
   */
  alias(source: ModelMessage, known: ModelMessage): boolean {
    if (source === known) return true;
    const converted = this.#converted.get(known);
    if (converted === undefined || JSON.stringify(source) !== JSON.stringify(known)) return false;
    this.#converted.set(source, converted);
    return true;
  }

  /** The ctxkit messages of one ModelMessage (converted on first sight). */
  convert(source: ModelMessage): readonly Message[] {
    const known = this.#converted.get(source);
    if (known !== undefined) return known;
    const messages = fromAiSdk([source], {
      ...this.#options,
      sessionId: this.#sessionId,
      ids: (prefix) => `${prefix}_step_${++this.#nextId}`,
      startSeq: this.#nextSeq,
      startTurn: this.#turn,
    });
    this.#nextSeq += messages.length;
    this.#turn = messages.at(-1)?.turn ?? this.#turn;
    this.#converted.set(source, messages);
    for (const message of messages) this.#origin.set(message, source);
    return messages;
  }

  /**
   * Governed ctxkit messages back as ModelMessages: a source message whose every converted message is still
   * there, unchanged and in a row, goes out as the very object it came in as in this step (`current`); anything
   * governance rewrote (or added) is converted with `toAiSdk`.
   */
  restore(
    governed: readonly Message[],
    current: ReadonlyMap<readonly Message[], ModelMessage>,
  ): ModelMessage[] {
    const output: ModelMessage[] = [];
    let pending: Message[] = [];
    const flush = () => {
      if (pending.length === 0) return;
      output.push(...toAiSdk(pending, { ...this.#options, references: "placeholder" }).messages);
      pending = [];
    };
    let index = 0;
    while (index < governed.length) {
      const message = governed[index]!;
      const source = this.#origin.get(message);
      const group = source === undefined ? undefined : this.#converted.get(source);
      if (source !== undefined && group !== undefined && group.every((m, at) => governed[index + at] === m)) {
        flush();
        output.push(current.get(group) ?? source);
        index += group.length;
        continue;
      }
      if (message.role === "system") {
        // A system message inside `messages` (`allowSystemInMessages`) stays where it was.
        flush();
        const text = message.content.flatMap((block) => (block.type === "text" ? [block.text] : []));
        output.push({ role: "system", content: text.join("\n\n") });
      } else pending.push(message);
      index++;
    }
    flush();
    return output;
  }
}

/**
 * A `prepareStep` function for `generateText`/`streamText` that applies ctxkit governance to every step of an
 * agent loop: the step's messages are governed (truncation, offloading, compaction, pre-flight) and sent in their
 * place; messages governance did not touch go out as the very objects the SDK holds, so the prompt cache keeps
 * hitting between checkpoints. The provider's reported input tokens of each step are recorded back, so later
 * decisions are anchored on them. Keep one per conversation: reusing it for the next `generateText` call of the
 * same chat (with the earlier messages passed again) continues the same governed view.
 *
 * When the step's model is an Anthropic one, the instructions and the two newest stable messages carry cache
 * breakpoints (`providerOptions.anthropic.cacheControl`, on copies); for an OpenAI model given a `sessionId`,
 * the step's `providerOptions.openai.promptCacheKey` is that id (see `PromptCachingOptions`).
 *
 * Unlike `ctxkitMiddleware`, it sees the SDK's own messages (`ModelMessage`) and never the provider call, so it
 * cannot retry after a provider overflow error; combine the two when that matters.
 *
 * @example
 * ```ts
 * const prepareStep = ctxkitPrepareStep({ contextWindow: 128_000, counter, summarizer, tools });
 * await generateText({ model, tools, prompt: "Fix the failing test", prepareStep, stopWhen: stepCountIs(50) });
 * ```
 */
export function ctxkitPrepareStep(options: CtxkitPrepareStepOptions): CtxkitPrepareStep {
  const governor = new Governor(options);
  const bridge = new MessageBridge(options.sessionId ?? "ai-sdk", options);
  let toolTokens: Promise<number> | undefined;
  let instructionsTokens = { text: "", tokens: 0 };
  let sources: ModelMessage[] = [];
  let returned: ModelMessage[] | undefined;
  /** The instructions last returned, and the caller's they stand for (the SDK hands them back next step). */
  let marked: { returned: SystemModelMessage[]; original: Instructions | undefined } | undefined;
  let prepared: RequestTokens | undefined;

  const fixedTokens = async (instructions: Instructions | undefined): Promise<number> => {
    toolTokens ??=
      options.tools === undefined
        ? Promise.resolve(0)
        : toolDefinitions(options.tools).then((text) => options.counter.countText(text));
    const text = instructionText(instructions);
    if (text !== instructionsTokens.text)
      instructionsTokens = { text, tokens: text === "" ? 0 : options.counter.countText(text) };
    return (await toolTokens) + instructionsTokens.tokens;
  };

  /**
   * The step's full, ungoverned messages: what it appended to our last answer, or (in a new `generateText` call
   * of the chat) its messages, the leading ones equal to what was seen before keeping their ctxkit messages.
   */
  const sourcesOf = (messages: readonly ModelMessage[]): ModelMessage[] => {
    const continues =
      returned !== undefined &&
      messages.length >= returned.length &&
      returned.every((message, index) => messages[index] === message);
    if (continues) return [...sources, ...messages.slice(returned!.length)];
    let same = true;
    return messages.map((message, index) => {
      const known = sources[index];
      same &&= known !== undefined && bridge.alias(message, known);
      return message;
    });
  };

  const prepareStep = async (step: PrepareStepInput): Promise<PreparedStep> => {
    const instructions =
      marked !== undefined && marked.returned === step.instructions ? marked.original : step.instructions;
    const last = step.steps.at(-1);
    if (prepared !== undefined && last !== undefined) {
      governor.recordSuccess();
      if (last.usage.inputTokens !== undefined) governor.observeUsage(prepared, last.usage.inputTokens);
    }
    sources = sourcesOf(step.messages);
    const current = new Map<readonly Message[], ModelMessage>();
    const history: Message[] = [];
    for (const source of sources) {
      const converted = bridge.convert(source);
      current.set(converted, source);
      history.push(...converted);
    }
    const request = await governor.prepare(history, { fixedTokens: await fixedTokens(instructions) });
    prepared = request.tokens;
    options.onRequest?.(request);
    const system = instructionList(instructions);
    const cached = withPromptCaching(
      { system, messages: bridge.restore(request.messages, current) },
      {
        ...options,
        model: step.model,
        sessionId: options.sessionId,
        ephemeralTail: ephemeralTail(request.messages),
        countTokens: (text) => options.counter.countText(text),
      },
    );
    returned = cached.messages;
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
  return Object.assign(prepareStep, { governor });
}
