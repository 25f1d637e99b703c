import { generateText, type LanguageModel } from "ai";
import { z } from "zod";
import { SummarizerError } from "../errors/errors.ts";
import type { Message } from "../model/message.ts";
import { validate } from "../model/schemas.ts";
import type { TokenCounter } from "../tokens/token-counter.ts";
import { charEstimateCounter, createExtractiveSummarizer } from "./extractive-summarizer.ts";
import { transcriptParts, type TranscriptLimits } from "./render-transcript.ts";
import { summarizeRequestSchema, trimmedMarker } from "./summarize-request-schema.ts";
import type { SummarizeRequest, Summarizer, SummarizerPrice } from "./summarizer.ts";
import {
  SUMMARY_SYSTEM_PROMPT,
  snapshotPrompt,
  verifyPrompt,
  type SummaryPromptInput,
} from "./summary-prompts.ts";

/** Options of `createLlmSummarizer`. */
export interface LlmSummarizerOptions {
  /** Any AI SDK language model (or a gateway model id). It is called with no tools. */
  readonly model: LanguageModel;
  /** Run a second call that checks the draft against the history and returns a corrected snapshot. */
  readonly verify?: boolean;
  /** Retries of each model call on retryable errors (the AI SDK's own retry). Default 2. */
  readonly maxRetries?: number;
  /** Used when the model fails or answers empty. Default: the extractive summarizer. */
  readonly fallback?: Summarizer;
  /** Time limit of each model call, in milliseconds. */
  readonly timeoutMs?: number;
  /** The summary call's own prompt must fit this (the summarizer model's window). Default 60,000 tokens. */
  readonly maxInputTokens?: number;
  /** Each tool output in the rendered history keeps about this many tokens (head and tail). Default 2,000. */
  readonly maxToolOutputTokens?: number;
  /** Sizes the prompt. Default: one token per 4 characters. */
  readonly counter?: Pick<TokenCounter, "countText">;
  readonly temperature?: number;
  /** Told when the fallback summarizer (or the static marker) stood in for the model. */
  readonly onFallback?: (notice: { readonly error: unknown; readonly usedMarker: boolean }) => void;
  /**
   * Price of one token read and written by the summary model, in units of the governed model's uncached input
   * price. Default: the same model, output at five times input (Anthropic's ratio; OpenAI's is four).
   */
  readonly price?: SummarizerPrice;
}

const optionsSchema = z.object({
  model: z.custom<LanguageModel>(
    (value) =>
      typeof value === "string" ||
      (typeof value === "object" && value !== null && "doGenerate" in value && "modelId" in value),
    "expected an AI SDK language model",
  ),
  verify: z.boolean().default(false),
  maxRetries: z.number().int().min(0).default(2),
  fallback: z
    .custom<Summarizer>(
      (value) => typeof (value as { summarize?: unknown } | null)?.summarize === "function",
      "expected a Summarizer",
    )
    .optional(),
  timeoutMs: z.number().int().positive().optional(),
  maxInputTokens: z.number().int().min(2_000).default(60_000),
  maxToolOutputTokens: z.number().int().min(50).default(2_000),
  counter: z
    .custom<Pick<TokenCounter, "countText">>(
      (value) => typeof (value as { countText?: unknown } | null)?.countText === "function",
      "expected a TokenCounter",
    )
    .optional(),
  temperature: z.number().min(0).max(2).optional(),
  onFallback: z.custom<unknown>((value) => typeof value === "function", "expected a function").optional(),
  price: z.object({ input: z.number().nonnegative(), output: z.number().nonnegative() }).optional(),
});

/** The transcript never gets less than this, however large the previous summary. */
const MIN_TRANSCRIPT_TOKENS = 1_000;

/** The transcript of a summary request in parts, each small enough for one call's `maxInputTokens`. */
function promptParts(
  request: SummarizeRequest,
  settings: { readonly maxInputTokens: number; readonly verify: boolean },
  counter: Pick<TokenCounter, "countText">,
  limits: TranscriptLimits,
): ReturnType<typeof transcriptParts> {
  const fixed = counter.countText(snapshotPrompt({ transcript: "", focus: request.focus, maxTokens: 0 }));
  const previousTokens = Math.max(counter.countText(request.previousSummary ?? ""), request.maxTokens);
  const budget = Math.max(
    MIN_TRANSCRIPT_TOKENS,
    settings.maxInputTokens - fixed - previousTokens - (settings.verify ? request.maxTokens : 0),
  );
  return transcriptParts(request.messages, budget, (text) => counter.countText(text), limits);
}

/**
 * What `createLlmSummarizer` (default options) would read and write to produce `summary` for `request`: per
 * part of the transcript, its system prompt and snapshot prompt (with the summary so far), and the summary. Used
 * to bill summaries made offline as if an LLM had made them.
 *
 * @example
 * const { inputTokens, outputTokens } = llmSummaryTokens(request, summary, counter);
 */
export function llmSummaryTokens(
  request: SummarizeRequest,
  summary: string,
  counter: Pick<TokenCounter, "countText">,
): { inputTokens: number; outputTokens: number } {
  const limits: TranscriptLimits = { maxToolOutputChars: 2_000 * 4, headShare: 0.2 };
  const parts = promptParts(request, { maxInputTokens: 60_000, verify: false }, counter, limits);
  const system = counter.countText(SUMMARY_SYSTEM_PROMPT);
  const summaryTokens = counter.countText(summary);
  let inputTokens = 0;
  parts.forEach((part, index) => {
    const previousSummary = index === 0 ? request.previousSummary : summary;
    inputTokens +=
      system +
      counter.countText(
        snapshotPrompt({
          transcript: part.text,
          previousSummary,
          focus: request.focus,
          maxTokens: request.maxTokens,
        }),
      );
  });
  return { inputTokens, outputTokens: summaryTokens * Math.max(1, parts.length) };
}

/** `provider:model` of an AI SDK model, for the summarizer's name. */
export function languageModelName(model: LanguageModel): string {
  return typeof model === "string" ? model : `${model.provider}:${model.modelId}`;
}

/** Removes a code fence or `<summary>` wrapper some models put around their whole answer. */
export function unwrapSnapshot(text: string): string {
  const trimmed = text.trim();
  const fenced = /^```[\w-]*\n([\s\S]*?)\n```$/.exec(trimmed);
  if (fenced) return fenced[1]!.trim();
  // Checked by position, not by a lazy regex: backtracking over a long whitespace run would be quadratic.
  const open = "<summary>";
  const close = "</summary>";
  const lower = trimmed.slice(0, open.length).toLowerCase();
  if (
    lower === open &&
    trimmed.slice(-close.length).toLowerCase() === close &&
    trimmed.length >= open.length + close.length
  )
    return trimmed.slice(open.length, -close.length).trim();
  return trimmed;
}

/**
 * A summarizer over any AI SDK language model. Each summary is a disposable call with no tools and a minimal
 * system prompt; the history is rendered as a transcript inside the user prompt (not as chat messages, so
 * provider tool-pairing rules cannot fail, and instructions inside it stay data), long tool outputs clipped
 * to head and tail. The prompt asks for a structured snapshot (goal and instructions verbatim, decisions,
 * files, actions, errors and fixes, current state, next steps), anchors on the previous summary (update, don't
 * rebuild), honours the focus and the `maxTokens` output budget. A history too long for `maxInputTokens` is
 * summarised in parts, each updating the last. With `verify`, a second call checks the draft. When the model
 * fails or answers empty, the `fallback` summarizer (default: extractive) takes over from where it stopped;
 * if that fails too, a static marker stands in. An aborted `signal` rejects instead.
 *
 * @example
 * const summarizer = createLlmSummarizer({ model: openai("gpt-4.1-mini"), verify: true });
 * const summary = await summarizer.summarize({ messages, maxTokens: 2_000, focus: "the parser" });
 */
export function createLlmSummarizer(options: LlmSummarizerOptions): Summarizer {
  const settings = validate(optionsSchema, options, "LLM summarizer options");
  const counter = settings.counter ?? charEstimateCounter;
  const fallback = settings.fallback ?? createExtractiveSummarizer({ counter });
  const limits: TranscriptLimits = { maxToolOutputChars: settings.maxToolOutputTokens * 4, headShare: 0.2 };
  const onFallback = options.onFallback;

  async function call(prompt: string, request: SummarizeRequest): Promise<string> {
    const result = await generateText({
      model: settings.model,
      instructions: SUMMARY_SYSTEM_PROMPT,
      prompt,
      maxOutputTokens: request.maxTokens,
      maxRetries: settings.maxRetries,
      ...(request.signal !== undefined && { abortSignal: request.signal }),
      ...(settings.timeoutMs !== undefined && { timeout: settings.timeoutMs }),
      ...(settings.temperature !== undefined && { temperature: settings.temperature }),
    });
    return unwrapSnapshot(result.text);
  }

  async function summarizePart(input: SummaryPromptInput, request: SummarizeRequest): Promise<string> {
    const draft = await call(snapshotPrompt(input), request);
    if (draft === "") throw new SummarizerError("the summarizer model returned an empty summary");
    if (!settings.verify) return draft;
    try {
      const checked = await call(verifyPrompt(input, draft), request);
      return checked === "" ? draft : checked;
    } catch (error) {
      if (request.signal?.aborted) throw error;
      return draft;
    }
  }

  async function fallBack(
    request: SummarizeRequest,
    messages: readonly Message[],
    previousSummary: string | undefined,
    error: unknown,
  ): Promise<string> {
    try {
      const text = await fallback.summarize({ ...request, messages, previousSummary });
      if (text.trim() !== "") {
        onFallback?.({ error, usedMarker: false });
        return text;
      }
    } catch (fallbackError) {
      if (request.signal?.aborted) throw fallbackError;
    }
    onFallback?.({ error, usedMarker: true });
    const marker = trimmedMarker(messages.length);
    return previousSummary ? `${previousSummary}\n\n${marker}` : marker;
  }

  const price = settings.price ?? { input: 1, output: 5 };
  // The verification pass reads the history again and writes the snapshot again.
  const calls = settings.verify ? 2 : 1;
  return {
    name: `llm:${languageModelName(settings.model)}`,
    price: { input: price.input * calls, output: price.output * calls },
    async summarize(request: SummarizeRequest): Promise<string> {
      validate(summarizeRequestSchema, request, "summarize request");
      request.signal?.throwIfAborted();
      const parts = promptParts(request, settings, counter, limits);
      let summary = request.previousSummary;
      let start = 0;
      for (const part of parts) {
        const input = { transcript: part.text, previousSummary: summary, focus: request.focus };
        try {
          summary = await summarizePart({ ...input, maxTokens: request.maxTokens }, request);
        } catch (error) {
          if (request.signal?.aborted) throw error;
          return fallBack(request, request.messages.slice(start), summary, error);
        }
        start = part.end;
      }
      return summary ?? "";
    },
  };
}
