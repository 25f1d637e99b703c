import type { LanguageModelV4 } from "@ai-sdk/provider";
import type { LoadSettingsOptions } from "../../config/load-settings.ts";
import type { AssistantInput } from "../../conversation/conversation.ts";
import type { Settings } from "../../config/settings.ts";
import type { ContextEngine } from "../../engine/context-engine.ts";
import type { EngineSession } from "../../engine/engine-session.ts";
import type { PreparedRequest } from "../../engine/prepared-request.ts";
import { InterruptedError } from "../../errors/errors.ts";
import { messageText } from "../../model/blocks.ts";
import type { Message } from "../../model/message.ts";
import type { ChatOutput } from "./chat-output.ts";
import type { OpenedStores } from "../open-stores.ts";
import { streamReply } from "./stream-reply.ts";
import { knownApiKeys } from "../../providers/api-key.ts";
import type { ProviderErrorContext } from "../../providers/classify-provider-error.ts";
import { providerNames, type ProviderName } from "../../providers/provider-catalog.ts";
import { resolveConfiguredModels } from "../../providers/resolve-configured-models.ts";
import { createChatEngine } from "./chat-engine.ts";
import type { PipelineFromBase } from "../pipeline-module.ts";

/** The chat's system prompt (core memories are appended by the engine when memory is on). */
export const CHAT_SYSTEM_PROMPT =
  "You are a helpful assistant talking with the user in a terminal. Answer clearly and concisely.";

/** The provider name of a model as in model strings (`openai.responses` → `openai`). */
function providerOf(model: LanguageModelV4): string {
  return model.provider.replace(/\.(chat|responses|messages|generative-ai)$/, "");
}

/** What a turn came to. */
export type TurnOutcome = "answered" | "interrupted";

/** Everything a running chat uses. */
export interface ChatRuntimeOptions {
  readonly engine: ContextEngine;
  readonly stores: OpenedStores;
  readonly model: LanguageModelV4;
  /** `provider:model` the model was resolved from (the `--model` flag or the `model` setting). */
  readonly modelSpec: string;
  readonly settings: Settings;
  /** Title of a session the chat creates (`--session-title`). */
  readonly sessionTitle?: string;
  /** The `--pipeline` module, applied again to the preset's pipeline when `/config` changes the settings. */
  readonly pipeline?: PipelineFromBase;
  readonly output: ChatOutput;
  /** Where `/config` reads and writes settings. */
  readonly location: LoadSettingsOptions;
  /** The session to start in. */
  readonly sessionId: string;
  /** First backoff delay of provider retries (tests shorten it). */
  readonly retryBaseDelayMs?: number;
}

/**
 * A running chat: the current session, the model, the last request sent, and the turn in flight. Turns go
 * through the engine (governed, assembled, committed in one transaction); `interrupt()` aborts the turn in flight
 * and removes it, so nothing of it is stored.
 */
export class ChatRuntime {
  readonly stores: OpenedStores;
  readonly output: ChatOutput;
  readonly location: LoadSettingsOptions;
  engine: ContextEngine;
  settings: Settings;
  model: LanguageModelV4;
  modelSpec: string;
  session: EngineSession;
  /** The last request prepared in this session. */
  lastRequest: PreparedRequest | undefined;
  readonly #retryBaseDelayMs: number | undefined;
  readonly #sessionTitle: string | undefined;
  readonly #pipeline: PipelineFromBase | undefined;
  #phase: "idle" | "requesting" | "saving" = "idle";
  #interrupting: Promise<Message[]> | undefined;

  constructor(options: ChatRuntimeOptions) {
    this.engine = options.engine;
    this.stores = options.stores;
    this.settings = options.settings;
    this.output = options.output;
    this.location = options.location;
    this.model = options.model;
    this.modelSpec = options.modelSpec;
    this.session = options.engine.session(options.sessionId);
    this.#retryBaseDelayMs = options.retryBaseDelayMs;
    this.#sessionTitle = options.sessionTitle;
    this.#pipeline = options.pipeline;
  }

  /**
   * Applies settings to the running chat (`/config`): resolves the model from `modelSpec` again, builds the engine
   * for the new settings (pipeline, window, summarizer, memory budget) and reloads the current session from the
   * store under it. The next request is governed by the new settings; nothing stored changes.
   */
  async reconfigure(settings: Settings, modelSpec: string): Promise<void> {
    const models = await resolveConfiguredModels(
      { ...settings, model: modelSpec },
      { env: this.location.env ?? {} },
    );
    const engine = await createChatEngine({
      settings,
      models,
      stores: this.stores,
      output: this.output,
      ...(this.#sessionTitle !== undefined && { sessionTitle: this.#sessionTitle }),
      ...(this.#pipeline !== undefined && { pipeline: this.#pipeline }),
    });
    this.engine.release(this.session.id);
    this.engine = engine;
    this.settings = settings;
    this.model = models.model;
    this.modelSpec = modelSpec;
    this.session = engine.session(this.session.id);
    this.lastRequest = undefined;
  }

  /** `provider:model` of the model in use. */
  get modelName(): string {
    return `${providerOf(this.model)}:${this.model.modelId}`;
  }

  #providerContext(): ProviderErrorContext {
    const name = providerOf(this.model);
    const secrets = knownApiKeys({ env: this.location.env ?? process.env, apiKeys: this.settings.apiKeys });
    return (providerNames as readonly string[]).includes(name)
      ? { provider: name as ProviderName, secrets }
      : { secrets };
  }

  /** True while a turn is being requested or saved. */
  get busy(): boolean {
    return this.#phase !== "idle";
  }

  /** Switches to another (existing or new) session. */
  switchTo(sessionId: string): EngineSession {
    this.engine.release(this.session.id);
    this.session = this.engine.session(sessionId);
    this.lastRequest = undefined;
    return this.session;
  }

  /**
   * Reloads the session from the store after a removed turn. The engine's in-memory history does not hold the
   * compactions governance made, and a removed turn makes the governor rebuild its view from that history; the
   * store has them, so reloading keeps the compacted view.
   */
  #reload(): void {
    this.switchTo(this.session.id);
  }

  /**
   * Governs and assembles the request the next turn would start from, without sending it, so `/context` and
   * `/compact` see the governed view (also of a session just loaded). Undefined for an empty session.
   */
  async inspectNext(): Promise<PreparedRequest | undefined> {
    if ((await this.session.historyLength()) === 0) return undefined;
    this.lastRequest = await this.session.prepare({ system: CHAT_SYSTEM_PROMPT });
    return this.lastRequest;
  }

  /**
   * Aborts the request in flight and removes its turn. Returns false when there is nothing to interrupt (no turn,
   * or the reply is already being saved).
   */
  interrupt(): boolean {
    if (this.#phase !== "requesting" || this.#interrupting !== undefined) return false;
    this.#interrupting = this.session.interrupt();
    return true;
  }

  /** Streams the model's reply to `request`, each delta and retry shown as it comes. */
  #stream(request: PreparedRequest, signal: AbortSignal): Promise<AssistantInput> {
    const output = this.output;
    return streamReply({
      model: this.model,
      request,
      signal,
      maxRetries: this.settings.maxRetries,
      timeoutMs: this.settings.requestTimeoutMs,
      ...(this.#retryBaseDelayMs !== undefined && { baseDelayMs: this.#retryBaseDelayMs }),
      onDelta: (delta) => output.emit({ type: "delta", text: delta }),
      context: this.#providerContext(),
      onRetry: ({ retry, delayMs, error }) =>
        output.emit({ type: "retry", retry, delayMs, message: error.message }),
    });
  }

  /**
   * One turn: the user's message, a governed request streamed from the model, the reply recorded and the turn
   * committed. A context the model refuses as too long is trimmed (then cleared) and sent again
   * (`EngineSession.recover`). An interrupt removes the turn and resolves `interrupted`; a failure removes it and
   * is thrown.
   */
  async send(text: string): Promise<TurnOutcome> {
    const session = this.session;
    const output = this.output;
    this.#phase = "requesting";
    this.#interrupting = undefined;
    try {
      const turn = await session.begin(text);
      try {
        // Too long for the model after all: the turn trims (then clears) the context and asks again; the
        // governance event (`emergency-recovery`) tells the user what was done.
        const { response: reply } = await turn.send(
          (request, signal) => {
            this.lastRequest = request;
            return this.#stream(request, signal);
          },
          { system: CHAT_SYSTEM_PROMPT },
        );
        if (this.#interrupting !== undefined) throw new InterruptedError();
        this.#phase = "saving";
        const { reply: message } = await turn.commit(reply);
        output.emit({
          type: "reply",
          sessionId: session.id,
          text: message === undefined ? "" : messageText(message),
          usage: reply.usage ?? null,
        });
        return "answered";
      } catch (error) {
        if (this.#interrupting !== undefined || error instanceof InterruptedError) {
          const removed = await (this.#interrupting ?? turn.dispose());
          this.#reload();
          output.emit({ type: "interrupted", sessionId: session.id, removed: removed.length });
          return "interrupted";
        }
        await turn.dispose();
        this.#reload();
        throw error;
      }
    } finally {
      this.#phase = "idle";
      this.#interrupting = undefined;
    }
  }
}
