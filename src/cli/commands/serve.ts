import { homedir } from "node:os";
import { join } from "node:path";
import { Option, type Command } from "commander";
import { loadSettings } from "../../config/index.ts";
import { ConfigError } from "../../errors/errors.ts";
import { redactSecrets } from "../../errors/redact-secrets.ts";
import { preset } from "../../governance/presets.ts";
import { validate } from "../../model/schemas.ts";
import { resolveModel } from "../../providers/resolve-model.ts";
import { JsonFileKeyStore } from "../../server/auth/json-file-key-store.ts";
import { tenantSchema } from "../../server/auth/key-store.ts";
import { LOCAL_TENANT } from "../../server/server-options.ts";
import { isLoopbackAddress, startServer, type RunningServer } from "../../server/start-server.ts";
import type { ServerEngineOptions } from "../../server/tenancy/tenant-engines.ts";
import type { UpstreamOptions } from "../../server/upstream/upstream-options.ts";
import { createLlmSummarizer } from "../../summarize/llm-summarizer.ts";
import type { Summarizer } from "../../summarize/summarizer.ts";
import type { Executor } from "../../sync/executor.ts";
import { languageModelResponder } from "../../sync/language-model-responder.ts";
import type { TenantHubOptions } from "../../server/sync/tenant-sync-endpoint.ts";
import type { CliIo, CommandRegistration } from "../program.ts";
import { commandExecutor, parseExecutorSpec } from "../serve/command-executor.ts";
import { chooseDatabase, openStores } from "../open-stores.ts";
import { anthropicUpstreamFromChoice, upstreamFromChoice } from "../serve/serve-upstream.ts";
import { describeLimits, keyLimits, serveLimits, type LimitFlags } from "../serve/serve-limits.ts";
import { readTenantLimits } from "../serve/tenant-limits-file.ts";

interface ServeFlags {
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
  memoryInContext?: boolean;
  publicMetrics?: boolean;
  rateLimit?: string;
  maxBody?: string;
  upstreamTimeout?: string;
  tenantLimits?: string;
}

/** The key file: `--keys`, else `~/.ctxkit/server-keys.json`. */
function keyFile(flag: string | undefined): string {
  return flag ?? join(homedir(), ".ctxkit", "server-keys.json");
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

async function serve(flags: ServeFlags, io: CliIo): Promise<void> {
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
  });
  const anthropicUpstream = anthropicUpstreamFromChoice({
    anthropicUpstream: flags.anthropicUpstream,
    apiKeys: settings.apiKeys,
    env: io.env,
  });
  const keysPath = keyFile(flags.keys);
  const keys = flags.auth ? new JsonFileKeyStore(keysPath) : undefined;
  const keyCount = keys === undefined ? 0 : (await keys.list()).length;
  const sync = await syncHubs(flags, upstream);
  const { summarizer, summariesNote } = await chooseSummarizer(settings, io.env);
  const engine: ServerEngineOptions = {
    ...(upstream?.model !== undefined && { model: upstream.model }),
    ...(settings.contextWindow !== undefined && { contextWindow: settings.contextWindow }),
    ...(settings.maxOutputTokens !== undefined && { maxOutputTokens: settings.maxOutputTokens }),
    ...(summarizer !== undefined && { summarizer }),
    coreMemoryTokens: settings.memory.maxCoreTokens,
    policy: preset(settings.preset, settings.policy),
  };
  const stores = await openStores(database, {
    memory: settings.memory.enabled,
    // Many sessions commit at once: a writer thread groups their commits and keeps fsyncs off the event loop.
    writerThread: true,
  });
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
      publicMetrics: flags.publicMetrics === true,
      limits,
      ...(tenantLimits !== undefined && { tenantLimits }),
      host,
      port,
      log: (line) => io.stderr.write(`${line}\n`),
    });
  } catch (error) {
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
    ...(tenantLimits === undefined
      ? []
      : [
          `  limits:   per tenant from ${flags.tenantLimits} (${Object.keys(tenantLimits).join(", ") || "none"}); ` +
            "keys' own limits from ctxkit serve keys add",
        ]),
    sync === undefined
      ? "  sync:     off (add --executor name=command to serve /v1/sync)"
      : `  sync:     ${running.url.replace(/^http/, "ws")}/v1/sync`,
  ];
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

  const signal = await nextSignal();
  io.stdout.write(`ctxkit serve: ${signal}, shutting down\n`);
  try {
    await running.close();
  } finally {
    await stores.close();
  }
  io.stdout.write("ctxkit serve: stopped\n");
}

/** The limit flags of `ctxkit serve`, for the server or for one key. */
function addLimitOptions(command: Command, whose: string, defaults: LimitFlags): Command {
  const by = (text: string | undefined) => (text === undefined ? "" : ` (default ${text})`);
  return command
    .option(
      "--rate-limit <rate>",
      `${whose} requests per second[/burst[/seconds a request may wait]], or off${by(defaults.rateLimit)}`,
    )
    .option("--max-body <size>", `largest request body: bytes, or with KiB/MiB${by(defaults.maxBody)}`)
    .option(
      "--upstream-timeout <seconds>",
      `upstream silence allowed before a 504${by(defaults.upstreamTimeout)}`,
    );
}

function registerKeys(serveCommand: Command, io: CliIo): void {
  const keysOption = () => new Option("--keys <file>", "key file (default ~/.ctxkit/server-keys.json)");
  const keysCommand = serveCommand
    .command("keys")
    .description("Create, list and revoke the server's API keys");
  const add = keysCommand
    .command("add")
    .description(
      "Create an API key for a tenant; it is printed once and stored hashed. The limit flags give the key " +
        "limits of its own, over its tenant's and the server's",
    )
    .argument("<tenant>", "tenant the key belongs to (letters, digits, '.', '_', '-')")
    .option("--label <text>", "a note to recognise the key by")
    .addOption(keysOption());
  addLimitOptions(add, "this key's", {}).action(
    async (tenant: string, options: LimitFlags & { label?: string; keys?: string }) => {
      validate(tenantSchema, tenant, "tenant");
      const limits = keyLimits(options);
      const store = new JsonFileKeyStore(keyFile(options.keys));
      const { key, record } = await store.create(tenant, options.label, limits);
      const own = record.limits === undefined ? "" : ` with limits ${describeLimits(record.limits)}`;
      io.stdout.write(`${key}\n`);
      io.stderr.write(
        `ctxkit: key ${record.id} for tenant "${record.tenant}"${own} stored hashed in ${store.path}; ` +
          "copy it now, it is not shown again\n",
      );
    },
  );
  keysCommand
    .command("list")
    .description("List the keys (ids, tenants, labels and own limits; the keys themselves are not stored)")
    .addOption(keysOption())
    .action(async (options: { keys?: string }) => {
      const records = await new JsonFileKeyStore(keyFile(options.keys)).list();
      if (records.length === 0) io.stdout.write("no keys; create one with: ctxkit serve keys add <tenant>\n");
      for (const record of records) {
        const limits = record.limits === undefined ? "" : `  limits: ${describeLimits(record.limits)}`;
        io.stdout.write(
          `${record.id}  ${record.tenant}  ${record.createdAt}${record.label ? `  ${record.label}` : ""}${limits}\n`,
        );
      }
    });
  keysCommand
    .command("revoke")
    .description("Revoke a key by its id (running servers stop accepting it at once)")
    .argument("<id>", "the key id (the 12 characters after ctxk_)")
    .addOption(keysOption())
    .action(async (id: string, options: { keys?: string }) => {
      if (!(await new JsonFileKeyStore(keyFile(options.keys)).revoke(id))) {
        throw new ConfigError("key", `no key with id "${id}"; list them with: ctxkit serve keys list`);
      }
      io.stdout.write(`revoked ${id}\n`);
    });
}

/**
 * `ctxkit serve`: runs the HTTP API, the OpenAI-compatible stateful proxy and (with `--executor`) the agent-sync
 * WebSocket over the configured store, on 127.0.0.1:7710 by default, until SIGINT or SIGTERM. API keys are
 * required unless `--no-auth` (loopback only); `ctxkit serve keys add <tenant>` creates one.
 *
 * @example
 * createProgram([registerServe], io).parseAsync(["serve", "--port", "0", "--upstream", "http://127.0.0.1:11434/v1"], { from: "user" });
 */
export const registerServe: CommandRegistration = (program, io) => {
  const serveCommand = program
    .command("serve")
    .description("Serve the HTTP API, the OpenAI-compatible proxy and the inspector")
    .option("--host <address>", "address to bind (default 127.0.0.1, the server.host setting)")
    .option("--port <port>", "port (default 7710, the server.port setting; 0 picks a free one)")
    .option("--db <file>", "SQLite database (default the db setting, ~/.ctxkit/ctxkit.db)")
    .option("--pg <url>", "PostgreSQL URL (default the pgUrl setting)")
    .option("--upstream <baseURL>", "OpenAI-compatible server to forward to (key: CTXKIT_UPSTREAM_API_KEY)")
    .option(
      "--anthropic-upstream <baseURL>",
      "Anthropic Messages API for /v1/messages (default https://api.anthropic.com/v1; key: ANTHROPIC_API_KEY)",
    )
    .option("--model <provider:model>", "model that serves every request (default the model setting)")
    .option("--no-auth", "no API keys: every request is tenant local (127.0.0.1 only)")
    .option("--keys <file>", "API key file (default ~/.ctxkit/server-keys.json)")
    .option(
      "--executor <name=command>",
      "an execution agent for /v1/sync (repeatable)",
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .option("--memory-in-context", "put each tenant's core memories in its sessions' system prompts")
    .option("--public-metrics", "serve /metrics without a key")
    .option(
      "--tenant-limits <file>",
      'JSON limits by tenant, e.g. {"acme": {"rateLimit": {"requestsPerSecond": 20, "burst": 40}}} (see docs/deploy.md)',
    );
  addLimitOptions(serveCommand, "per-key", {
    rateLimit: "200/400/5",
    maxBody: "4MiB",
    upstreamTimeout: "120",
  }).action((flags: ServeFlags) => serve(flags, io));
  registerKeys(serveCommand, io);
};
