/**
 * What `ctxkit serve` does once its flags are parsed: opens the stores, starts the server and runs until a
 * signal. Loaded only when the command runs, so the CLI's other commands start without the server's modules.
 */
import { batchedLines } from "./batched-lines.ts";
import { loadSettings } from "../../config/index.ts";
import { ConfigError } from "../../errors/errors.ts";
import { redactSecrets } from "../../errors/redact-secrets.ts";
import { pipelineFromSettings } from "../../config/setting-entries.ts";
import type { GovernancePipeline } from "../../governance/pipeline.ts";
import { loadPipelineModule } from "../pipeline-module.ts";
import { resolveModel } from "../../providers/resolve-model.ts";
import { JsonFileKeyStore } from "../../server/auth/json-file-key-store.ts";
import { LOCAL_TENANT } from "../../server/server-options.ts";
import { isLoopbackAddress, startServer, type RunningServer } from "../../server/start-server.ts";
import type { ServerEngineOptions } from "../../server/tenancy/tenant-engines.ts";
import type { UpstreamOptions } from "../../server/upstream/upstream-options.ts";
import { createLlmSummarizer } from "../../summarize/llm-summarizer.ts";
import type { Summarizer } from "../../summarize/summarizer.ts";
import type { Executor } from "../../sync/executor.ts";
import { languageModelResponder } from "../../sync/language-model-responder.ts";
import type { TenantHubOptions } from "../../server/sync/tenant-sync-endpoint.ts";
import type { CliIo } from "../program.ts";
import { commandExecutor, parseExecutorSpec } from "./command-executor.ts";
import { chooseDatabase, openStores } from "../open-stores.ts";
import { anthropicUpstreamFromChoice, upstreamFromChoice } from "./serve-upstream.ts";
import { serveLimits } from "./serve-limits.ts";
import { readTenantLimits } from "./tenant-limits-file.ts";
import { keyFile } from "./key-file.ts";

/** The flags of `ctxkit serve`. */
export interface ServeFlags {
  host?: string;
  port?: string;
  db?: string;
  pg?: string;
  upstream?: string;
  anthropicUpstream?: string;
  model?: string;
  auth: boolean;
  keys?: string;
  executor: string[];
  syncRetentionDays?: string;
  memoryInContext?: boolean;
  publicMetrics?: boolean;
  rateLimit?: string;
  maxBody?: string;
  upstreamTimeout?: string;
  tenantLimits?: string;
  promptCacheKey?: boolean;
  reasoningContent?: boolean;
  /** A module whose default export is the governance pipeline, or a function of the preset's making one. */
  pipeline?: string;
}

/** Days of `--sync-retention-days`: a whole number of days above 0, or undefined (never delete). */
function parseRetentionDays(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const days = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(days) || days < 1) {
    throw new ConfigError(
      "--sync-retention-days",
      `"${text}" is not a number of days; give a whole number from 1 (leave it out to delete nothing)`,
    );
  }
  return days;
}

function parsePort(text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new ConfigError("--port", `"${text}" is not a port; give 0–65535 (0 picks a free one)`);
  }
  return port;
}

/** The sync hubs: one per tenant, keeping their state in the server's session store (sync sessions of that tenant). */
async function syncHubs(
  flags: ServeFlags,
  upstream: UpstreamOptions | undefined,
): Promise<((tenant: string) => TenantHubOptions) | undefined> {
  if (flags.executor.length === 0) return undefined;
  const executors: Record<string, Executor> = {};
  for (const text of flags.executor) {
    const spec = parseExecutorSpec(text);
    executors[spec.name] = commandExecutor(spec);
  }
  const conversation =
    upstream?.model === undefined
      ? undefined
      : languageModelResponder({
          model: await resolveModel(`openai-compatible:${upstream.model}`, {
            baseURL: upstream.baseURL,
            env: {},
            ...(upstream.apiKey !== undefined && { headers: { authorization: `Bearer ${upstream.apiKey}` } }),
          }),
        });
  return () => ({
    executors,
    ...(conversation !== undefined && { conversation }),
  });
}

/** True for the ConfigError of a hosted provider whose API key is not set (`apiKeyFor`). */
function isMissingApiKey(error: unknown): error is ConfigError {
  return error instanceof ConfigError && error.key.startsWith("apiKeys.");
}

/** What a missing key's error says to do, without the setting prefix, for a line of `serve`'s report. */
function missingKeyAdvice(error: ConfigError): string {
  return error.message.replace(/^setting "[^"]*": /, "");
}

/**
 * The upstream, or why there is none: a model whose provider key is missing does not stop the server (the
 * sessions can still be browsed); the proxy and turns routes say which key to set.
 */
function chooseUpstream(choice: Parameters<typeof upstreamFromChoice>[0]): {
  upstream?: UpstreamOptions;
  unavailable?: string;
} {
  try {
    const upstream = upstreamFromChoice(choice);
    return upstream === undefined ? {} : { upstream };
  } catch (error) {
    if (!isMissingApiKey(error)) throw error;
    return { unavailable: `${missingKeyAdvice(error)}, then restart ctxkit serve` };
  }
}

/** Resolves when the process gets SIGINT or SIGTERM. */
function nextSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      resolve(signal);
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  });
}

/**
 * The LLM summarizer of the `summarizationModel` setting, if any. Without its provider's key the engine's
 * default summarizer is used and the report says so.
 */
async function chooseSummarizer(
  settings: ReturnType<typeof loadSettings>["settings"],
  env: CliIo["env"],
): Promise<{ summarizer?: Summarizer; summariesNote?: string }> {
  const spec = settings.summarizationModel;
  if (spec === undefined || spec.trim() === "") return {};
  try {
    const model = await resolveModel(spec, {
      env,
      baseURL: settings.baseURL,
      apiKeys: settings.apiKeys,
      settingKey: "summarizationModel",
    });
    return { summarizer: createLlmSummarizer({ model }) };
  } catch (error) {
    if (!isMissingApiKey(error)) throw error;
    return { summariesNote: `extractive, not ${spec}: ${missingKeyAdvice(error)}` };
  }
}

/** The pipeline that governs the proxy: the settings' preset, made into the `--pipeline` module's when given. */
async function servedPipeline(
  module: string | undefined,
  settings: Parameters<typeof pipelineFromSettings>[0],
): Promise<GovernancePipeline> {
  const base = pipelineFromSettings(settings);
  return module === undefined ? base : (await loadPipelineModule(module, process.cwd()))(base);
}

/** What the start-up cleanup of sync sessions did, for the report. */
async function syncCleanup(running: RunningServer): Promise<string> {
  try {
    const deleted = (await running.sync?.cleaned) ?? 0;
    return `${deleted} deleted now`;
  } catch (error) {
    return `failed (${redactSecrets(error instanceof Error ? error.message : String(error))}); sync refuses connections`;
  }
}

export async function runServe(flags: ServeFlags, io: CliIo): Promise<void> {
  const { settings } = loadSettings({ cwd: process.cwd(), env: io.env });
  const host = flags.host ?? settings.server.host;
  const port = parsePort(flags.port, settings.server.port);
  if (!flags.auth && !isLoopbackAddress(host)) {
    throw new ConfigError(
      "--no-auth",
      `authentication can only be turned off on 127.0.0.1, ::1 or localhost, not ${host}; ` +
        "create a key with: ctxkit serve keys add <tenant>",
    );
  }
  const limits = serveLimits(flags);
  const tenantLimits = flags.tenantLimits === undefined ? undefined : readTenantLimits(flags.tenantLimits);
  const database = chooseDatabase(flags, settings);
  const model = flags.model ?? settings.model;
  const { upstream, unavailable } = chooseUpstream({
    upstream: flags.upstream,
    model,
    baseURL: settings.baseURL,
    apiKeys: settings.apiKeys,
    env: io.env,
    promptCacheKey: flags.promptCacheKey,
    reasoningContent: flags.reasoningContent,
  });
  const anthropicUpstream = anthropicUpstreamFromChoice({
    anthropicUpstream: flags.anthropicUpstream,
    apiKeys: settings.apiKeys,
    env: io.env,
  });
  const keysPath = keyFile(flags.keys);
  const keys = flags.auth ? new JsonFileKeyStore(keysPath) : undefined;
  const keyCount = keys === undefined ? 0 : (await keys.list()).length;
  const syncRetentionDays = parseRetentionDays(flags.syncRetentionDays);
  if (syncRetentionDays !== undefined && flags.executor.length === 0) {
    throw new ConfigError(
      "--sync-retention-days",
      "it deletes /v1/sync sessions, which only --executor serves; add --executor name=command or drop it",
    );
  }
  const sync = await syncHubs(flags, upstream);
  const { summarizer, summariesNote } = await chooseSummarizer(settings, io.env);
  const engine: ServerEngineOptions = {
    ...(upstream?.model !== undefined && { model: upstream.model }),
    ...(settings.contextWindow !== undefined && { contextWindow: settings.contextWindow }),
    ...(settings.maxOutputTokens !== undefined && { maxOutputTokens: settings.maxOutputTokens }),
    ...(summarizer !== undefined && { summarizer }),
    coreMemoryTokens: settings.memory.maxCoreTokens,
    pipeline: await servedPipeline(flags.pipeline, settings),
  };
  const stores = await openStores(database, {
    memory: settings.memory.enabled,
    // Many sessions commit at once: a writer thread groups their commits and keeps fsyncs off the event loop.
    writerThread: true,
  });
  // Servers sharing a PostgreSQL database take turns on a session, as the turns of one server do.
  const turnLocks =
    database.kind === "postgres"
      ? new (await import("../../store/postgres/postgres-turn-locks.ts")).PostgresTurnLocks(database.url)
      : undefined;
  let running: RunningServer;
  try {
    running = await startServer({
      store: stores.sessions,
      ...(stores.memories !== undefined && { memory: stores.memories }),
      memoryInContext: flags.memoryInContext === true,
      engine,
      ...(upstream !== undefined && { upstream }),
      ...(unavailable !== undefined && { upstreamUnavailable: unavailable }),
      ...(anthropicUpstream !== undefined && { anthropicUpstream }),
      // The sessions made by the CLI (demo, import, chat) have no owner: they are the local user's.
      unownedSessionsTenant: LOCAL_TENANT,
      auth: flags.auth,
      ...(keys !== undefined && { keys }),
      ...(sync !== undefined && { sync }),
      ...(syncRetentionDays !== undefined && { syncRetentionDays }),
      publicMetrics: flags.publicMetrics === true,
      ...(turnLocks !== undefined && { turnLocks }),
      limits,
      ...(tenantLimits !== undefined && { tenantLimits }),
      host,
      port,
      log: batchedLines((text) => io.stderr.write(text)),
    });
  } catch (error) {
    await turnLocks?.close();
    await stores.close();
    throw error;
  }

  const lines = [
    `ctxkit serve: listening on ${running.url}`,
    `  store:    ${stores.location}${stores.memories === undefined ? " (memory off)" : " (with memory)"}`,
    upstream === undefined
      ? unavailable === undefined
        ? "  upstream: none; /v1/chat/completions and turns answer 503 (pass --upstream <url> or --model provider:model)"
        : `  upstream: none; /v1/chat/completions and turns answer 503 until it has a key: ${unavailable}`
      : `  upstream: ${redactSecrets(upstream.baseURL)}${upstream.model === undefined ? " (the request's model)" : ` model ${upstream.model}`}`,
    anthropicUpstream === undefined
      ? "  anthropic: none; /v1/messages answers 503 (set ANTHROPIC_API_KEY, or pass --anthropic-upstream <url>)"
      : `  anthropic: ${redactSecrets(anthropicUpstream.baseURL)} (/v1/messages: Claude Code, Anthropic SDKs)`,
    ...(summariesNote === undefined ? [] : [`  summaries: ${summariesNote}`]),
    flags.auth
      ? `  auth:     API keys in ${keysPath} (${keyCount} now; add one with: ctxkit serve keys add <tenant>; ` +
        `tenant ${LOCAL_TENANT}'s keys also see the sessions made by ctxkit demo, import and chat)`
      : `  auth:     OFF (every request is tenant ${LOCAL_TENANT}, which sees the sessions made by ctxkit demo, import and chat)`,
    ...(!flags.auth
      ? []
      : [
          flags.publicMetrics === true
            ? "  metrics:  /metrics needs no key (--public-metrics); keep this port on a private network"
            : "  metrics:  /metrics for keys with the metrics permission (ctxkit serve keys add <name> --metrics)",
        ]),
    ...(tenantLimits === undefined
      ? []
      : [
          `  limits:   per tenant from ${flags.tenantLimits} (${Object.keys(tenantLimits).join(", ") || "none"}); ` +
            "keys' own limits from ctxkit serve keys add",
        ]),
    sync === undefined
      ? "  sync:     off (add --executor name=command to serve /v1/sync)"
      : `  sync:     ${running.url.replace(/^http/, "ws")}/v1/sync; ${
          syncRetentionDays === undefined
            ? "its sessions are kept (delete idle ones at start with --sync-retention-days <days>)"
            : `its sessions idle over ${syncRetentionDays} days are deleted at start, every tenant's ` +
              `(--sync-retention-days): ${await syncCleanup(running)}`
        }`,
  ];
  // Listening for signals before the report is out: whoever waits for it may stop the server at once.
  const signalled = nextSignal();
  io.stdout.write(`${lines.join("\n")}\n`);
  if (!flags.auth) {
    io.stderr.write(
      `\nWARNING: AUTHENTICATION IS OFF (--no-auth). Every request is tenant "local": any program on this ` +
        `machine that can reach ${running.url} can read, change and delete every session.\n\n`,
    );
  } else if (keyCount === 0) {
    io.stderr.write(
      "ctxkit serve: no API key yet, so every request gets 401; to browse your own sessions (those made by " +
        `ctxkit demo, import and chat) create one with: ctxkit serve keys add ${LOCAL_TENANT}\n`,
    );
  }

  const signal = await signalled;
  io.stdout.write(`ctxkit serve: ${signal}, shutting down\n`);
  try {
    await running.close();
  } finally {
    await turnLocks?.close();
    await stores.close();
  }
  io.stdout.write("ctxkit serve: stopped\n");
}
