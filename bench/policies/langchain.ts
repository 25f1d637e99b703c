// LangChain.js v1 as its users run it: the real `langchain` package's `createAgent` with its
// `summarizationMiddleware` and `contextEditingMiddleware`, driven request by request over a recorded
// transcript by a fake chat model that answers each request with the recorded reply. Not a reimplementation:
// every decision (when to summarise, what to keep, which tool results to clear) is LangChain's own code.
//
// The settings, read from langchain 1.5.14 (node_modules/langchain/dist/agents/middleware/):
// - summarization.js: no default trigger — without one it never summarises, so a user must set it. The docs'
//   snippet (docs.langchain.com/oss/javascript/langchain/middleware/built-in, Summarization) uses
//   `trigger: { tokens: 4000 }, keep: { messages: 20 }`, sized for a demo; the bench gives it a window-relative
//   setting an agent user would choose, `trigger: { fraction: 0.8 }, keep: { fraction: 0.3 }` (policies/index.ts).
//   Its defaults: keep `{ messages: 20 }` (DEFAULT_MESSAGES_TO_KEEP), token counter `countTokensApproximately`
//   (characters / 4 of text blocks, tool calls as JSON, tool call ids; middleware/utils.js), the messages sent
//   to the summarizer trimmed to their newest 4,000 tokens (DEFAULT_TRIM_TOKEN_LIMIT, `trimMessages` strategy
//   "last", partial messages allowed), DEFAULT_SUMMARY_PROMPT with the history rendered by `getBufferString`,
//   and the summary returned as a user message "Here is a summary of the conversation to date:\n\n…" that
//   replaces every older message in the agent's state (the cut never separates a tool call from its result).
// - contextEditing.js: one `ClearToolUsesEdit` with trigger `{ tokens: 100000 }` (DEFAULT_TRIGGER_TOKENS), keep
//   the newest `{ messages: 3 }` tool results (DEFAULT_KEEP), placeholder "[cleared]", tool inputs kept
//   (clearToolInputs false), clearAtLeast 0, no excluded tools, the approximate counter (tokenCountMethod
//   "approx"). It edits each model request only, never the agent's state, and drops tool results whose call
//   is no longer in the request (after a summary).
// Both middlewares use the defaults above; only the summarization trigger had to be chosen.
//
// How a transcript is driven (`replayWithLangChain`), as a user's app runs the agent:
// - One `agent.invoke` per run of recorded user input, on one thread with LangGraph's MemorySaver, so the state
//   (and the summaries that replace it) carries over between turns. Leading system messages are `systemPrompt`.
// - The fake model answers request k with recorded reply k: consecutive assistant messages make one AIMessage
//   with every tool call; reasoning becomes Anthropic-style `thinking` blocks (as LangChain's Anthropic
//   integration returns it; the middleware neither counts nor summarises them); free-form tool input is
//   wrapped as `{ input }`.
// - Tools, one per recorded tool name accepting any input, return their call's recorded result (several
//   recorded messages for one call are joined), in the calls' order as LangChain appends them, which may differ
//   from the recorded order. A call with no recorded result gets "[no result recorded]"; a reply none of whose
//   calls has one was interrupted, so the run stops before its tools (`interruptBefore`) and they stay unanswered.
// - User messages recorded in the middle of a run (after tool results, before the next reply) stop the run
//   after its tools (`interruptAfter`) and go in a new `invoke`, as an app sends a user's interjection.
// - Images and files reach LangChain as text placeholders (`mediaPlaceholder`).
// - Summaries: the summary model parses the messages out of LangChain's prompt (what its trim kept) and answers
//   with ctxkit's summarizer's text for them, an earlier summary among them given as the previous summary, at
//   the budget every bench policy gets. `onSummary` reports the prompt and summary sizes for billing.
// - Views are the recorded ctxkit messages (the agent received them whole), except cleared results (the
//   placeholder, same id) and summaries (a `kind: "summary"` user message holding LangChain's summary text).
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { ModelProfile } from "@langchain/core/language_models/profile";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { contextEditingMiddleware, createAgent, summarizationMiddleware } from "langchain";
import type { Message } from "../../src/model/message.ts";
import { requestPoints } from "../../src/replay/replay.ts";
import type { Summarizer } from "../../src/summarize/summarizer.ts";
import type { TokenCounter } from "../../src/tokens/token-counter.ts";
import { usableWindow } from "../../src/tokens/model-info.ts";
import {
  inputToLangChain,
  langChainText,
  MessageLedger,
  replyToLangChain,
  resultToLangChain,
} from "./langchain-messages.ts";

/** A summarization trigger or keep condition, as `summarizationMiddleware` takes it. */
export interface LangChainContextSize {
  readonly fraction?: number;
  readonly tokens?: number;
  readonly messages?: number;
}

/** Options of `replayWithLangChain`. */
export interface LangChainReplayOptions {
  /** The model's window: the fake models' profile `maxInputTokens` (for `fraction` conditions). */
  readonly contextWindow: number;
  /** ctxkit counter, for reporting summary sizes only (LangChain counts with its own approximation). */
  readonly counter: TokenCounter;
  /** Produces the text of every summary the middleware asks its model for. */
  readonly summarizer: Summarizer;
  /** Called once per replayed request, in order, with the messages the model received (as ctxkit messages). */
  readonly onRequest: (index: number, view: readonly Message[]) => void | Promise<void>;
  /** Called for every summary the middleware asked its model for: the prompt's and the summary's tokens. */
  readonly onSummary?: (call: { inputTokens: number; outputTokens: number }) => void;
  /** Summarization trigger; default the docs' example `{ tokens: 4000 }` (the middleware has none). */
  readonly trigger?: LangChainContextSize;
  /** What summarization keeps; default the middleware's own `{ messages: 20 }`. */
  readonly keep?: LangChainContextSize;
}

/** The summarization trigger of LangChain's docs example (the middleware has no default). */
export const langChainDocsTrigger: LangChainContextSize = { tokens: 4000 };

/** The stand-in result for a call the transcript has no result for (its reply's other calls have one). */
function missingResult(reply: Message, callId: string, toolName: string): Message {
  return Object.freeze({
    id: `langchain-no-result-${callId}`,
    sessionId: reply.sessionId,
    seq: reply.seq,
    turn: reply.turn,
    role: "tool",
    content: Object.freeze([{ type: "tool-result", callId, toolName, content: "[no result recorded]" }]),
    createdAt: reply.createdAt,
  } satisfies Message);
}

/** A chat model whose every answer comes from `answer`; tools bind to nothing (the answers are recorded). */
class ReplayChatModel extends BaseChatModel {
  readonly #answer: (messages: BaseMessage[]) => Promise<AIMessage>;
  readonly #maxInputTokens: number;

  constructor(maxInputTokens: number, answer: (messages: BaseMessage[]) => Promise<AIMessage>) {
    super({});
    this.#answer = answer;
    this.#maxInputTokens = maxInputTokens;
  }

  _llmType(): string {
    return "ctxkit-replay";
  }

  override get profile(): ModelProfile {
    return { maxInputTokens: this.#maxInputTokens };
  }

  override bindTools(): this {
    return this;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const message = await this.#answer(messages);
    return { generations: [{ text: langChainText(message), message }] };
  }
}

/** One request of the replay: the recorded reply and what follows it until the next request. */
interface ReplayStep {
  readonly reply: readonly Message[];
  /** Tool calls the reply makes. */
  readonly calls: number;
  /** Recorded results by call id (a tool reads its call's). */
  readonly results: ReadonlyMap<string, Message[]>;
  /** Messages after the reply the tools do not produce (user input, stray results): the next `invoke`. */
  readonly input: readonly Message[];
}

/** The transcript cut at its request points. */
function replaySteps(messages: readonly Message[], points: readonly number[]): ReplayStep[] {
  return points.map((point, k) => {
    let end = point;
    while (end < messages.length && messages[end]!.role === "assistant") end++;
    const reply = messages.slice(point, end);
    const calls = new Set(
      reply.flatMap((message) =>
        message.content.flatMap((block) => (block.type === "tool-call" ? [block.id] : [])),
      ),
    );
    const results = new Map<string, Message[]>();
    const input: Message[] = [];
    for (const message of messages.slice(end, points[k + 1] ?? messages.length)) {
      const block = message.content.find((part) => part.type === "tool-result");
      if (message.role === "tool" && block?.type === "tool-result" && calls.has(block.callId)) {
        const list = results.get(block.callId) ?? [];
        list.push(message);
        results.set(block.callId, list);
      } else input.push(message);
    }
    return { reply, calls: calls.size, results, input };
  });
}

/**
 * Replays `messages` (replayable messages, see `replayableMessages`) through LangChain.js's `createAgent` with
 * its summarization and context-editing middleware, calling `onRequest` with the view of every request and
 * `onSummary` for every summary. Summaries are `summarizer`'s text for the messages LangChain's prompt holds.
 *
 * @example
 * await replayWithLangChain(messages, {
 *   contextWindow: 200_000, counter, summarizer: createExtractiveSummarizer({ counter }),
 *   onRequest: (index, view) => views.push(view),
 * });
 */
export async function replayWithLangChain(
  messages: readonly Message[],
  options: LangChainReplayOptions,
): Promise<void> {
  const points = requestPoints(messages);
  if (points.length === 0) return;
  const steps = replaySteps(messages, points);
  const ledger = new MessageLedger();

  let systemEnd = 0;
  while (systemEnd < points[0]! && messages[systemEnd]!.role === "system") systemEnd++;
  const systemSources = messages.slice(0, systemEnd);
  const systemPrompt = systemSources.map((message) => langChainText(inputToLangChain(message))).join("\n\n");

  let answered = -1;
  const model = new ReplayChatModel(options.contextWindow, async (received) => {
    const step = steps[++answered];
    if (step === undefined) throw new Error(`LangChain replay: request ${answered} has no recorded reply`);
    const view = ledger.toCtxkit(
      received,
      systemEnd > 0 ? { text: systemPrompt, sources: systemSources } : undefined,
    );
    await options.onRequest(answered, view);
    return ledger.register(replyToLangChain(step.reply), step.reply);
  });

  // LangChain turns a failing summary model into the summary "Error generating summary: …"; the replay fails.
  let summaryFailure: Error | undefined;
  const summaryModel = new ReplayChatModel(options.contextWindow, async (received) => {
    const prompt = langChainText(received[received.length - 1]!);
    const summary = await summarizeFromPrompt(prompt, ledger, options).catch((error: unknown) => {
      summaryFailure ??= error instanceof Error ? error : new Error(String(error));
      throw error;
    });
    options.onSummary?.({
      inputTokens: options.counter.countText(prompt),
      outputTokens: options.counter.countText(summary),
    });
    return new AIMessage(summary);
  });

  const toolNames = new Set(
    steps.flatMap((step) =>
      step.reply.flatMap((message) =>
        message.content.flatMap((block) => (block.type === "tool-call" ? [block.name] : [])),
      ),
    ),
  );
  const tools = [...toolNames].map((name) =>
    tool(
      (_input: unknown, config: { toolCall?: { id?: string } }) => {
        const callId = config.toolCall?.id ?? "";
        const step = steps[answered]!;
        const results = step.results.get(callId) ?? [missingResult(step.reply.at(-1)!, callId, name)];
        return ledger.registerResult(resultToLangChain(callId, name, results), results, step.reply[0]!.id);
      },
      { name, description: `Recorded ${name} tool`, schema: { type: "object", additionalProperties: true } },
    ),
  );

  const agent = createAgent({
    model,
    tools,
    ...(systemEnd > 0 && { systemPrompt }),
    middleware: [
      summarizationMiddleware({
        model: summaryModel,
        trigger: options.trigger ?? langChainDocsTrigger,
        ...(options.keep !== undefined && { keep: options.keep }),
      }),
      contextEditingMiddleware(),
    ],
    checkpointer: new MemorySaver(),
  });
  const config = {
    configurable: { thread_id: "replay" },
    interruptAfter: ["tools"],
    recursionLimit: 10_000,
  };

  let input: BaseMessage[] | null = messages
    .slice(systemEnd, points[0])
    .map((message) => ledger.register(inputToLangChain(message), [message]));
  // Each invoke makes one request: the run pauses after the tools, or ends with a reply that calls none.
  for (;;) {
    const before = answered;
    // A reply none of whose calls has a recorded result was interrupted: the app stopped before its tools ran.
    const next = steps[answered + 1];
    const interrupted = next !== undefined && next.calls > 0 && next.results.size === 0;
    await agent.invoke(input === null ? null : { messages: input }, {
      ...config,
      ...(interrupted && { interruptBefore: ["tools"] }),
    });
    if (summaryFailure !== undefined) throw summaryFailure;
    if (answered === before) throw new Error(`LangChain replay: no request after request ${before}`);
    if (answered === steps.length - 1) return;
    // Recorded input after the reply goes in a new invoke (as a user's app sends it); else the run resumes.
    const after = steps[answered]!.input;
    input =
      after.length > 0 ? after.map((message) => ledger.register(inputToLangChain(message), [message])) : null;
  }
}

/** The summary for LangChain's summary prompt: ctxkit's summarizer on the messages the prompt holds. */
async function summarizeFromPrompt(
  prompt: string,
  ledger: MessageLedger,
  options: LangChainReplayOptions,
): Promise<string> {
  const start = prompt.indexOf(historyStart);
  const end = prompt.lastIndexOf(historyEnd);
  if (start < 0 || end < start)
    throw new Error("LangChain replay: the summary prompt is not the default one");
  const held = ledger.parse(prompt.slice(start + historyStart.length, end));
  const previous = held.find((message) => message.kind === "summary");
  return options.summarizer.summarize({
    messages: held.filter((message) => message.kind !== "summary"),
    maxTokens: summaryBudget(options.contextWindow),
    ...(previous !== undefined && {
      previousSummary: summaryText(previous).replace(summaryPrefix, "").trim(),
    }),
  });
}

/**
 * The summary budget every bench policy gets (peer-support's `summaryBudget`: 6k tokens, at most 10% of the
 * usable window, with the governor's default 8,192-token output reserve).
 */
function summaryBudget(contextWindow: number): number {
  const usable = usableWindow({ contextWindow, maxOutputTokens: 8_192 });
  return Math.max(200, Math.min(6_000, Math.floor(usable * 0.1)));
}

/** Around the history in DEFAULT_SUMMARY_PROMPT (langchain/dist/agents/middleware/summarization.js). */
const historyStart = "Messages to summarize:\n";
const historyEnd = "\n</messages>";
/** DEFAULT_SUMMARY_PREFIX of the same file, before every summary in the state. */
const summaryPrefix = "Here is a summary of the conversation to date:";

function summaryText(message: Message): string {
  return message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
}
