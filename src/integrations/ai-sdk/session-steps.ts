import type { LanguageModelUsage, ModelMessage, SystemModelMessage, ToolSet } from "ai";
import type { ContextEngine } from "../../engine/context-engine.ts";
import type { PreparedRequest, ToolDefinition } from "../../engine/prepared-request.ts";
import type { ProviderOptions } from "../../formats/providers/ai-sdk/ai-sdk-types.ts";
import { canonicalJson } from "../../model/blocks.ts";
import type { Usage } from "../../model/message.ts";
import { entriesOf, feedItemsOf } from "../shared/language-model-prompt.ts";
import { sharedFeeds, type FeedItem, type SessionFeed } from "../shared/session-feed.ts";
import { instructionText, sessionToolDefinitions, type PrepareStepInput } from "./prepare-step.ts";

/** Options of `ctxkitSessionSteps`. */
export interface CtxkitSessionStepsOptions {
  /** The context engine: its store keeps the session, its policy governs every step. */
  engine: ContextEngine;
  /** The conversation's session (e.g. the chat id). */
  sessionId: string;
  /** The tools given to `generateText`/`streamText`: their definitions are counted in every request. */
  tools?: ToolSet;
  /** Called with every governed request before the model sees it. */
  onRequest?: (request: PreparedRequest) => void;
}

/** What `onStepFinish` reads of a finished step (any tool set's step result has these). */
export interface FinishedStep {
  readonly response: { readonly messages: readonly ModelMessage[]; readonly modelId?: string };
  /** The model the step was sent to: its provider is recorded with the reply. */
  readonly model?: { readonly provider: string; readonly modelId: string };
  readonly usage: LanguageModelUsage;
  readonly finishReason?: string;
}

/** The pair to spread into `generateText`/`streamText` options, and `settled` to await after the call. */
export interface CtxkitSessionSteps {
  /** Records the step's new input and sends the governed request; throws a step's earlier recording failure. */
  prepareStep(step: PrepareStepInput): Promise<{
    messages: ModelMessage[];
    instructions?: SystemModelMessage[];
    providerOptions?: ProviderOptions;
  }>;
  /** Records and commits the finished step (the SDK ignores what it throws: see `settled`). */
  onStepFinish(step: FinishedStep): Promise<void>;
  /**
   * Resolves once every finished step is committed; rejects with the first failure to record or commit one (a
   * `ConcurrentWriteError` when another process wrote the session, a database error). The AI SDK discards
   * `onStepFinish`'s errors, so await this after `generateText` (or after a `streamText` stream has finished):
   * otherwise a lost turn goes unnoticed. A later step of the same call already fails with that error (its
   * `prepareStep` throws it), so the loop stops; the session's open turn is dropped and reloaded from the store,
   * so the call can be sent again.
   */
  settled(): Promise<void>;
}

const feedOf = sharedFeeds<ModelMessage>();
const key = (message: ModelMessage) => canonicalJson(message);

function usageOf(usage: LanguageModelUsage): Usage | undefined {
  if (usage.inputTokens === undefined) return undefined;
  const { cacheReadTokens, cacheWriteTokens } = usage.inputTokenDetails;
  const reasoning = usage.outputTokenDetails.reasoningTokens;
  return {
    input: usage.inputTokens,
    output: usage.outputTokens ?? 0,
    ...(cacheReadTokens ? { cacheRead: cacheReadTokens } : {}),
    ...(cacheWriteTokens ? { cacheWrite: cacheWriteTokens } : {}),
    ...(reasoning ? { reasoning } : {}),
  };
}

/**
 * `prepareStep` and `onStepFinish` for `generateText`/`streamText` as a thin adapter over ctxkit's session core,
 * keyed by `sessionId` and persisted in the engine's store: before each step the session records what it has not
 * seen (the user's new input) and prepares the governed request, which the step sends instead of its messages; when
 * the step finishes, its reply and tool results are recorded and committed — with the governor's state, in one
 * transaction. So one conversation is one session whatever process serves it: a restarted process sends exactly
 * what it would have sent without the restart, and the provider's cache stays warm. Create one per call (it is
 * cheap); conversations are told apart by `sessionId`. The SDK ignores what `onStepFinish` throws: a step that
 * could not be committed makes the next step throw, and `settled()` reject, with its error.
 *
 * @example
 * ```ts
 * const steps = ctxkitSessionSteps({ engine, sessionId: chatId, tools });
 * const result = await generateText({ model, tools, messages, stopWhen: stepCountIs(20), ...steps });
 * await steps.settled(); // rejects when a step could not be stored
 * ```
 */
export function ctxkitSessionSteps(options: CtxkitSessionStepsOptions): CtxkitSessionSteps {
  let tools: Promise<ToolDefinition[]> | undefined;
  const definitions = () => (tools ??= sessionToolDefinitions(options.tools));

  /** The first failure to record or commit a finished step; every later step throws it. */
  let failure: { error: unknown } | undefined;
  /** The steps being recorded (the SDK does not wait for `onStepFinish` in every path). */
  let recording: Promise<void> = Promise.resolve();

  async function finish(step: FinishedStep): Promise<void> {
    const feed = feedOf(options.engine, options.sessionId);
    try {
      await recordStep(feed, step);
    } catch (error) {
      failure ??= { error };
      await feed.abandon().catch(() => undefined);
      throw error;
    }
  }

  return {
    async prepareStep(step) {
      await recording.catch(() => undefined);
      if (failure !== undefined) throw failure.error;
      const feed = feedOf(options.engine, options.sessionId);
      // Later steps' messages (the replies and tool results) were recorded when their step finished.
      if (step.stepNumber === 0) {
        const unseen = await feed.unseen(
          step.messages,
          (message) => message.role === "assistant",
          key,
          entriesOf,
        );
        await feed.record(unseen.flatMap(feedItemsOf));
      }
      const prepared = await feed.session.prepare({
        system: [{ name: "identity", content: instructionText(step.instructions), heading: null }],
        tools: await definitions(),
      });
      options.onRequest?.(prepared);
      const request = prepared.toAiSdk(step.model !== undefined ? { model: step.model } : {});
      return {
        messages: request.messages,
        ...(request.instructions !== undefined && { instructions: request.instructions }),
        ...(request.providerOptions !== undefined && { providerOptions: request.providerOptions }),
      };
    },

    onStepFinish(step) {
      const done = recording.then(() => (failure === undefined ? finish(step) : undefined));
      recording = done.catch(() => undefined);
      return done;
    },

    async settled() {
      await recording;
      if (failure !== undefined) throw failure.error;
    },
  };
}

/** Records a finished step's reply and tool results, and commits them. */
async function recordStep(feed: SessionFeed<ModelMessage>, step: FinishedStep): Promise<void> {
  // The step's own messages: its reply and the tool results after it (the list may hold earlier steps too).
  const messages = step.response.messages;
  const replyAt = messages.findLastIndex((message) => message.role === "assistant");
  if (replyAt < 0) return;
  const usage = usageOf(step.usage);
  const items = messages
    .slice(replyAt)
    .flatMap(feedItemsOf)
    .map((item): FeedItem<ModelMessage> => {
      if (item.entry.role !== "assistant") return item;
      const reply = {
        ...item.entry.reply,
        ...(usage !== undefined && { usage }),
        ...(step.finishReason !== undefined && { finishReason: step.finishReason }),
        ...(step.response.modelId !== undefined && { model: step.response.modelId }),
        ...(step.model !== undefined && { provider: step.model.provider }),
      };
      return { ...item, entry: { role: "assistant", reply } };
    });
  await feed.record(items);
  await feed.commit();
}
