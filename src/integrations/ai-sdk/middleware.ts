import type { LanguageModelV4Message, LanguageModelV4Middleware } from "@ai-sdk/provider";
import type { EngineSession } from "../../engine/engine-session.ts";
import { ValidationError } from "../../errors/errors.ts";
import type { PromptCachingOptions } from "../../formats/providers/ai-sdk/prompt-caching.ts";
import type { Governor, GovernedRequest, GovernorOptions } from "../../governance/governor.ts";
import { holds } from "../shared/held-messages.ts";
import { entriesOf } from "../shared/language-model-prompt.ts";
import { memoryEngine } from "../shared/memory-engine.ts";
import { sharedFeeds } from "../shared/session-feed.ts";
import { sessionMiddleware } from "./session-middleware.ts";

/** Options of `ctxkitMiddleware`: the governor's, plus a session id, prompt caching and a hook per request. */
export interface CtxkitMiddlewareOptions extends GovernorOptions, PromptCachingOptions {
  /**
   * Stamped on the recorded messages (events and memory entries carry it); when given, it is also OpenAI's
   * prompt-cache key (`promptCacheKey`). Default "ai-sdk".
   */
  sessionId?: string;
  /** Called with every governed request (e.g. to log its events or inspect it). */
  onRequest?: (request: GovernedRequest) => void;
}

const feedOf = sharedFeeds<LanguageModelV4Message>();

/**
 * True when `history` (a call's prompt without its system messages) continues what `session` holds: the session
 * is empty, or the prompt's newest reply is the session's newest one.
 */
async function continues(
  session: EngineSession,
  history: readonly LanguageModelV4Message[],
): Promise<boolean> {
  if ((await session.historyLength()) === 0) return true;
  const last = history.findLast((message) => message.role === "assistant");
  const reply = last === undefined ? undefined : entriesOf(last).find((entry) => entry.role === "assistant");
  if (reply === undefined) return false;
  const stored = await session.findLast(
    (message) => message.role === "assistant" && message.kind === undefined,
  );
  return holds(stored, reply);
}

/**
 * An AI SDK language-model middleware that applies ctxkit governance to every model call of a
 * `generateText`/`streamText` agent loop, without a store of yours: each call is a turn of one memory-backed
 * session (the same session turn as `ctxkitSessionMiddleware`'s), which holds the prompt it was given. A call whose
 * prompt continues it (the newest reply in the prompt is the session's) records only what is new; any other prompt
 * starts the session over. The prompt is governed before it is sent (truncation, offloading, compaction,
 * pre-flight), a provider overflow error triggers ctxkit's emergency recovery and one retry, and the session's own
 * tools (`recall_tool_output` when governance offloads) are offered and answered, streamed or not. For an Anthropic
 * model the last tool, the system prompt and the two newest stable messages carry cache breakpoints
 * (`providerOptions.anthropic.cacheControl`, on copies, never more than four with the caller's); for an OpenAI
 * model given a `sessionId`, the call's `providerOptions.openai.promptCacheKey` is that id unless the call set one
 * (see `PromptCachingOptions`). To keep conversations across processes, use `ctxkitSessionMiddleware` with a
 * store.
 *
 * @example
 * ```ts
 * import { wrapLanguageModel, generateText, stepCountIs } from "ai";
 * const governed = ctxkitMiddleware({ contextWindow: 128_000, counter, summarizer });
 * const model = wrapLanguageModel({ model: openai("gpt-4.1"), middleware: governed });
 * await generateText({ model, tools, prompt: "Fix the failing test", stopWhen: stepCountIs(50) });
 * ```
 */
export function ctxkitMiddleware(
  options: CtxkitMiddlewareOptions,
): LanguageModelV4Middleware & { readonly governor: Governor } {
  const owner = {};
  const engine = memoryEngine(options, owner);
  const id = options.sessionId ?? "ai-sdk";
  let governor: Governor | undefined;
  const middleware = sessionMiddleware(
    {
      engine,
      async feedFor(params, history) {
        let feed = feedOf(engine, id);
        if (!(await continues(feed.session, history))) {
          await engine.settings.store.deleteSession(id);
          engine.release(id);
          feed = feedOf(engine, id);
        }
        governor = await feed.session.governor();
        return { feed, providerOptions: params.providerOptions };
      },
      cacheKey: () => options.sessionId,
      onRequest: options.onRequest,
    },
    options,
  );
  return Object.defineProperty(Object.assign(owner, middleware), "governor", {
    get(): Governor {
      if (governor === undefined)
        throw new ValidationError("ctxkitMiddleware: its governor exists once the first model call was made");
      return governor;
    },
  }) as LanguageModelV4Middleware & { readonly governor: Governor };
}
