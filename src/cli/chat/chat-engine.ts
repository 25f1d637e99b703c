import type { Settings } from "../../config/settings.ts";
import { pipelineFromSettings } from "../../config/setting-entries.ts";
import { createContextEngine, type ContextEngine } from "../../engine/context-engine.ts";
import { createEngineMemory } from "../../engine/create-engine-memory.ts";
import type { ConfiguredModels } from "../../providers/resolve-configured-models.ts";
import { createExtractiveSummarizer } from "../../summarize/extractive-summarizer.ts";
import { createLlmSummarizer } from "../../summarize/llm-summarizer.ts";
import { counterForModel } from "../../tokens/counter-for-model.ts";
import { defaultModelRegistry } from "../../tokens/model-registry.ts";
import type { OpenedStores } from "../open-stores.ts";
import type { PipelineFromBase } from "../pipeline-module.ts";
import type { ChatOutput } from "./chat-output.ts";

/** The agent name chat sessions are stored under (`/sessions` and `--resume` look only at these). */
export const CHAT_AGENT = "ctxkit-chat";

/**
 * The chat's context engine for these settings and models: the model's window and tokenizer, LLM summaries with
 * the extractive fallback, the governance pipeline (the preset with `policy.*`, through the `--pipeline` module when given), long-term memory when the stores have
 * it, and every governance event shown in the chat. Built at start and again when `/config` changes a setting.
 *
 * @example
 * const engine = await createChatEngine({ settings, models, stores, output });
 */
export async function createChatEngine(options: {
  readonly settings: Settings;
  readonly models: ConfiguredModels;
  readonly stores: OpenedStores;
  readonly output: ChatOutput;
  /** Title of a session this engine creates. */
  readonly sessionTitle?: string;
  /** The `--pipeline` module: makes the pipeline from the settings' preset pipeline. */
  readonly pipeline?: PipelineFromBase;
}): Promise<ContextEngine> {
  const { settings, models, stores, output } = options;
  const base = pipelineFromSettings(settings);
  const counter = await counterForModel(defaultModelRegistry.lookup(models.model.modelId));
  return createContextEngine({
    store: stores.sessions,
    model: models.model,
    tokenCounter: counter,
    summarizer: createLlmSummarizer({
      model: models.summarizationModel,
      fallback: createExtractiveSummarizer({ counter }),
    }),
    pipeline: options.pipeline === undefined ? base : await options.pipeline(base),
    ...(settings.contextWindow !== undefined && { contextWindow: settings.contextWindow }),
    ...(settings.maxOutputTokens !== undefined && { maxOutputTokens: settings.maxOutputTokens }),
    ...(stores.memories !== undefined && {
      memory: createEngineMemory({ store: stores.memories, counter }),
      coreMemoryTokens: settings.memory.maxCoreTokens,
    }),
    session: {
      agent: CHAT_AGENT,
      ...(options.sessionTitle !== undefined && { title: options.sessionTitle }),
    },
    onEvent: (event) => output.emit({ type: "governance", event }),
  });
}
