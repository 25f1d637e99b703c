/** What `ctxkit replay` does once its flags are parsed (loaded only when the command runs). */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { ValidationError } from "../../errors/errors.ts";
import { fromFileSystemError } from "../../errors/file-access-error.ts";
import type { GovernorSettings } from "../../governance/governor-settings.ts";
import { withSettings, type GovernancePipeline } from "../../governance/pipeline.ts";
import { presetOptionsSchema } from "../../governance/preset-options.ts";
import { preset } from "../../governance/presets.ts";
import { validate } from "../../model/schemas.ts";
import {
  anthropicAnchors,
  toAnthropic,
  withAnthropicBreakpoints,
} from "../../formats/providers/anthropic/index.ts";
import { toOpenAIChatJson } from "../../formats/providers/index.ts";
import { importTranscriptFile, type ImportedConversation } from "../../formats/transcripts/index.ts";
import { replayConversation, type ReplayRequest, type ReplayTotals } from "../../replay/replay.ts";
import { counterForModel } from "../../tokens/counter-for-model.ts";
import { defaultModelRegistry } from "../../tokens/model-registry.ts";
import { cacheProfileFor, cacheProfiles } from "../../pricing/cache-profile.ts";
import { reservedOutputTokens } from "../../tokens/model-info.ts";
import { createExtractiveSummarizer } from "../../summarize/index.ts";
import { RetentionTracker } from "../../metrics/index.ts";
import { ensureDirectory } from "../../errors/ensure-directory.ts";
import type { Message } from "../../model/message.ts";
import type { CacheProfile } from "../../pricing/cache-profile.ts";
import type { TokenCounter } from "../../tokens/token-counter.ts";
import { storedSessionReplay } from "../stored-session-replay.ts";
import { withReadOnlyCliStore } from "./sessions-store.ts";
import { formatTable } from "../format-table.ts";
import { progressBar } from "../progress-bar.ts";
import type { CliIo } from "../program.ts";

const optionsSchema = z.object({
  format: z
    .enum(["auto", "claude-code", "codex", "gemini-cli", "openai", "swe-agent", "ctxkit"])
    .default("auto"),
  conversation: z.string().optional(),
  model: z.string().optional(),
  window: z.coerce.number().int().positive("--window must be a positive number of tokens").optional(),
  preset: z.string().optional(),
  config: z.string().optional(),
  pricing: z.enum(["anthropic", "openai", "gemini", "none"]).optional(),
  breakpoints: z.enum(["ctxkit", "newest"]).default("ctxkit"),
  cacheTtl: z.enum(["5m", "1h"]).default("5m"),
  json: z.boolean().default(false),
  explain: z
    .preprocess((value) => (value === true ? 5 : value), z.coerce.number().int().positive())
    .optional(),
  dump: z.string().optional(),
  dumpProvider: z.enum(["openai", "anthropic"]).default("openai"),
  session: z.string().optional(),
  db: z.string().optional(),
  pg: z.string().optional(),
});

/** What is replayed, and with which defaults (flags override them). */
interface ReplaySource {
  /** Its name in the report's first line: the conversation id and format, or the stored session. */
  readonly label: string;
  readonly messages: readonly Message[];
  readonly modelId: string;
  readonly contextWindow: number;
  readonly reservedOutputTokens: number;
  readonly counter: TokenCounter;
  readonly pipeline: GovernancePipeline;
  readonly cache: CacheProfile;
}

/** A transcript file's conversation, replayed as its recorded model (or `claude-sonnet-4-5`). */
async function fileSource(file: string, options: z.output<typeof optionsSchema>): Promise<ReplaySource> {
  const conversations = await importTranscriptFile(file, { format: options.format });
  const conversation = pickConversation(conversations, options.conversation, file);
  const recordedModel = conversation.messages.find((message) => message.model !== undefined)?.model;
  const modelId = recordedModel ?? "claude-sonnet-4-5";
  const model = defaultModelRegistry.lookup(modelId);
  return {
    label: `${conversation.id} (${conversation.format}, ${conversation.messages.length} messages)`,
    messages: conversation.messages,
    modelId,
    contextWindow: model.contextWindow,
    reservedOutputTokens: reservedOutputTokens(model),
    counter: await counterForModel(model),
    pipeline: preset("default"),
    // Priced as the recorded model's provider bills it.
    cache: cacheProfileFor(modelId, model.provider === "google" ? { provider: "gemini" } : {}),
  };
}

/** A stored session, replayed with the settings the inspector uses (the governance it recorded). */
async function sessionSource(id: string, options: z.output<typeof optionsSchema>, io: CliIo) {
  const flags = {
    ...(options.db !== undefined && { db: options.db }),
    ...(options.pg !== undefined && { pg: options.pg }),
  };
  return withReadOnlyCliStore(flags, io, async ({ store }): Promise<ReplaySource> => {
    const { messages, settings } = await storedSessionReplay(store, id);
    return {
      label: `session ${id} (${messages.length} stored messages, settings: ${settings.settingsFrom === "session" ? "the governance it recorded" : settings.settingsFrom})`,
      messages,
      modelId: settings.model ?? "claude-sonnet-4-5",
      contextWindow: settings.contextWindow,
      reservedOutputTokens: settings.reservedOutputTokens,
      counter: settings.counter,
      pipeline: settings.pipeline,
      cache: settings.cache,
    };
  });
}

function pickConversation(
  conversations: readonly ImportedConversation[],
  wanted: string | undefined,
  file: string,
): ImportedConversation {
  if (wanted === undefined) {
    const main = conversations.find((conversation) => !conversation.sidechain) ?? conversations[0];
    if (!main) throw new ValidationError(`${file} holds no conversation to replay`);
    return main;
  }
  const byId = conversations.find((conversation) => conversation.id === wanted);
  const index = /^\d+$/.test(wanted) ? conversations[Number(wanted)] : undefined;
  const found = byId ?? index;
  if (!found) {
    throw new ValidationError(
      `--conversation ${wanted}: no such conversation in ${file}; use an index 0–${conversations.length - 1} or one of its ids (ctxkit stats ${file})`,
    );
  }
  return found;
}

async function pipelineFrom(options: z.output<typeof optionsSchema>): Promise<GovernancePipeline> {
  if (options.config !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(await readFile(options.config, "utf8"));
    } catch (error) {
      throw new ValidationError(
        `--config ${options.config}: cannot read it as JSON (${(error as Error).message})`,
      );
    }
    const fileSchema = z.object({
      preset: z.string().optional(),
      policy: presetOptionsSchema.partial().optional(),
    });
    const file = validate(fileSchema, parsed, `replay config ${options.config}`);
    // The file's preset and knobs win over --preset (still checked to be a preset).
    if (options.preset !== undefined) preset(options.preset);
    return preset(file.preset ?? "default", file.policy);
  }
  return preset(options.preset ?? "default");
}

/**
 * The replay's governance pipeline: the preset's or config file's, with what the flags decide on top: the prices
 * the replay bills (`--pricing`, or the model's provider) and the cache TTL (`--cache-ttl`), so governance weighs
 * the cache the meter bills.
 *
 * @example
 * replayPipeline(preset("aggressive"), "openai", "1h").settings; // { ...aggressive's, pricing: "openai", cacheTtl: "1h" }
 */
export function replayPipeline(
  pipeline: GovernancePipeline,
  pricing: GovernorSettings["pricing"],
  cacheTtl: GovernorSettings["cacheTtl"],
): GovernancePipeline {
  return withSettings(pipeline, { pricing, cacheTtl });
}

/** Writes one dumped request; a failure stops the replay with a typed error naming the file. */
async function dump(folder: string, name: string, body: object): Promise<void> {
  const path = join(folder, name);
  await writeFile(path, `${JSON.stringify(body, null, 2)}\n`).catch((error: unknown) => {
    throw fromFileSystemError(error, path, "cannot write the request dump");
  });
}

/** Replays one transcript file and writes the report. */
export async function runReplay(
  file: string | undefined,
  raw: Record<string, unknown>,
  io: CliIo,
): Promise<void> {
  const options = validate(optionsSchema, raw, "replay options");
  if ((file === undefined) === (options.session === undefined)) {
    throw new ValidationError("give a transcript file or --session <id> (one of them)");
  }
  const source =
    options.session === undefined
      ? await fileSource(file!, options)
      : await sessionSource(options.session, options, io);
  const modelId = options.model ?? source.modelId;
  const model = defaultModelRegistry.lookup(modelId);
  const contextWindow =
    options.window ?? (options.model === undefined ? source.contextWindow : model.contextWindow);
  const reserved =
    options.window === undefined && options.model === undefined
      ? source.reservedOutputTokens
      : reservedOutputTokens({ contextWindow, maxOutputTokens: model.maxOutputTokens });
  const counter = options.model === undefined ? source.counter : await counterForModel(model);
  const pipeline =
    options.preset === undefined && options.config === undefined
      ? source.pipeline
      : await pipelineFrom(options);
  const cache =
    options.pricing === undefined
      ? options.model === undefined
        ? source.cache
        : cacheProfileFor(modelId, model.provider === "google" ? { provider: "gemini" } : {})
      : options.pricing === "none"
        ? cacheProfileFor(modelId, { provider: "none" })
        : cacheProfiles[options.pricing];
  const retention = new RetentionTracker();
  // Not mkdir({ recursive: true }): it spins forever where a folder cannot be created (`/proc/x`).
  if (options.dump !== undefined) ensureDirectory(options.dump);
  const progress = progressBar(io, "replay");
  const { requests, totals } = await replayConversation(source.messages, {
    contextWindow,
    reservedOutputTokens: reserved,
    counter,
    summarizer: createExtractiveSummarizer({ counter }),
    pipeline: replayPipeline(pipeline, cache.provider, options.cacheTtl),
    cache,
    breakpoints: options.breakpoints,
    longTtl: options.cacheTtl === "1h",
    retention,
    onProgress: (done, total) => progress.update(done, total),
    ...(options.dump !== undefined && {
      onRequest: async (index, view, _measured, cacheAnchors) => {
        await dump(options.dump!, `request-${index}.json`, { index, messages: toOpenAIChatJson(view) });
        if (options.dumpProvider === "anthropic") {
          // What ctxkit would send Claude: the Anthropic payload with its cache breakpoints, on the governor's
          // anchors too (as the replay priced them).
          const converted = toAnthropic(view);
          const payload = withAnthropicBreakpoints(converted, {
            model: modelId,
            ...(options.cacheTtl === "1h" && { ttl: "1h" as const }),
            anchors: anthropicAnchors(view, cacheAnchors, converted.messages),
          });
          await dump(options.dump!, `request-${index}.anthropic.json`, { index, ...payload });
        }
      },
    }),
  });
  progress.done();
  if (totals.requests > 0 && totals.fixedTokens + reserved >= contextWindow) {
    throw new ValidationError(
      `--window ${number(contextWindow)} cannot hold this conversation's system prompt and tools ` +
        `(${number(totals.fixedTokens)} tokens, recorded) with ${number(reserved)} tokens kept for the reply: ` +
        `give a --window above ${number(totals.fixedTokens + reserved)} (or leave it out for ${modelId}'s ` +
        `${number(model.contextWindow)})`,
    );
  }
  if (totals.requests > 0 && totals.refused === totals.requests) {
    throw new ValidationError(
      `--window ${contextWindow.toLocaleString("en-US")} is too small for this conversation: governance refused ` +
        `every one of its ${totals.requests} request${totals.requests === 1 ? "" : "s"}; give a larger --window (or leave it out for ${modelId}'s ` +
        `${model.contextWindow.toLocaleString("en-US")})`,
    );
  }
  if (options.json) {
    io.stdout.write(`${JSON.stringify({ requests, totals })}\n`);
    return;
  }
  io.stdout.write(
    `${describe(source.label, modelId, contextWindow, totals)}\n\n${renderTotals(totals)}\n\n${renderRequests(requests)}\n`,
  );
  if (options.explain !== undefined) io.stdout.write(`\n${explainWorst(requests, options.explain)}\n`);
}

function describe(label: string, model: string, window: number, totals: ReplayTotals): string {
  const cache = totals.cacheModel;
  const prices =
    cache.provider === "none"
      ? "no prompt cache"
      : `${cache.provider} prompt cache (${cache.model ?? "reference model"}: read ${cache.read}×, write ${cache.write}×, ` +
        `output ${cache.output}×, entries live ${cache.ttlSeconds / 60} min${cache.provider === "anthropic" ? `, ${cache.breakpoints} breakpoints` : ""})`;
  return (
    `Replayed ${label} with ${model}, ` + `window ${window.toLocaleString("en-US")}, priced by the ${prices}.`
  );
}

/**
 * The saving, or why none is claimed: a refused request costs nothing here but fails the agent, so a run with
 * refusals is not cheaper, it did less.
 */
function savingClaim(totals: ReplayTotals, saved: number): string {
  if (totals.refused === 0) {
    return saved >= 0
      ? `${(saved * 100).toFixed(1)}% below no governance`
      : `${(-saved * 100).toFixed(1)}% above no governance`;
  }
  return (
    `no saving claimed: ${totals.refused} of ${totals.requests} requests did not fit the window and were ` +
    "refused, which costs nothing here but stops the agent; raise --window"
  );
}

function renderTotals(totals: ReplayTotals): string {
  const saved = totals.rawCostUnits === 0 ? 0 : 1 - totals.costWithRereads / totals.rawCostUnits;
  const recorded = totals.recorded;
  const headers = ["", "without ctxkit", "with ctxkit", ...(recorded ? ["recorded agent"] : [])];
  const row = (label: string, raw: number, governed: number, spent?: number): (string | number)[] => [
    label,
    raw,
    governed,
    ...(recorded ? [spent ?? "—"] : []),
  ];
  return (
    formatTable(headers, [
      row("input tokens", totals.rawInputTokens, totals.governedInputTokens, recorded?.inputTokens),
      row(
        "cost units (billed: cache, summaries, re-reads)",
        Math.round(totals.rawCostUnits),
        Math.round(totals.costWithRereads),
        recorded && Math.round(recorded.costUnits),
      ),
      row("largest request", totals.maxRawTokens, totals.maxGovernedTokens),
    ]) +
    `\n\n${totals.requests} requests (system prompt and tools: ${number(totals.fixedTokens)} tokens each), ` +
    `${totals.compactions} compactions, ${number(totals.cachedInputTokens)} tokens read from the prompt cache and ` +
    `${number(totals.cacheWriteTokens)} written, ${totals.refused} refused.\n` +
    `Cost with ctxkit: ${number(totals.costUnits)} units as run, + ${number(totals.summarizerCostUnits)} for ` +
    `${totals.summaryCalls} summaries billed as LLM calls, + ${number(totals.rereadCostUnits)} for ${totals.rereads} ` +
    `re-reads = ${number(totals.costWithRereads)} (${savingClaim(totals, saved)}).\n` +
    `Next-step grounding ${percent(totals.grounding)} (edit anchors ${percent(totals.anchorsKept)}` +
    `${totals.groundingWorst === undefined ? "" : `; worst request ${totals.groundingWorst.index} at ${percent(totals.groundingWorst.score)}`}); ` +
    `keyword retention ${percent(totals.retention)}.`
  );
}

const number = (value: number) => Math.round(value).toLocaleString("en-US");
const percent = (value: number) => `${(value * 100).toFixed(1)}%`;

/** The `count` requests with the lowest grounding and the spans their views lacked. */
function explainWorst(requests: readonly ReplayRequest[], count: number): string {
  const worst = requests
    .filter((request) => request.grounding !== undefined && request.grounding < 1)
    .sort((a, b) => a.grounding! - b.grounding! || a.index - b.index)
    .slice(0, count);
  if (worst.length === 0) return "Every span the recorded replies used was in view.";
  return worst
    .map(
      (request) =>
        `request ${request.index}: grounding ${percent(request.grounding!)}, missing:\n` +
        (request.missing ?? []).map((span) => `  - ${span}`).join("\n"),
    )
    .join("\n");
}

function renderRequests(requests: readonly ReplayRequest[]): string {
  const shown = requests.filter((request) => request.events.length > 0 || request.error !== undefined);
  return formatTable(
    ["request", "raw", "governed", "cached", "events"],
    shown.map((request) => [
      request.index,
      request.rawTokens,
      request.governedTokens,
      request.cachedTokens,
      request.error ?? [...new Set(request.events)].join(", "),
    ]),
  );
}
