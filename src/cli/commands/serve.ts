import { Option, type Command } from "commander";
import { ConfigError } from "../../errors/errors.ts";
import { validate } from "../../model/schemas.ts";
import { JsonFileKeyStore } from "../../server/auth/json-file-key-store.ts";
import type { KeyPermission } from "../../server/auth/key-permissions.ts";
import { tenantSchema } from "../../server/auth/key-store.ts";
import type { CliIo, CommandRegistration } from "../program.ts";
import { keyFile } from "../serve/key-file.ts";
import type { ServeFlags } from "../serve/run-serve.ts";
import { describeLimits, keyLimits, type LimitFlags } from "../serve/serve-limits.ts";

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
    .description("create, list and revoke the server's API keys");
  const add = keysCommand
    .command("add")
    .description(
      "create an API key for a tenant; it is printed once and stored hashed. The limit flags give the key " +
        "limits of its own, over its tenant's and the server's",
    )
    .argument("<tenant>", "tenant the key belongs to (letters, digits, '.', '_', '-')")
    .option("--label <text>", "a note to recognise the key by")
    .option(
      "--metrics",
      "let the key read GET /metrics (every tenant's traffic counts: for the operator's scraper, under a " +
        "tenant of its own such as monitoring)",
    )
    .addOption(keysOption());
  addLimitOptions(add, "this key's", {}).action(
    async (tenant: string, options: LimitFlags & { label?: string; keys?: string; metrics?: boolean }) => {
      validate(tenantSchema, tenant, "tenant");
      const limits = keyLimits(options);
      const permissions: KeyPermission[] = options.metrics === true ? ["metrics"] : [];
      const store = new JsonFileKeyStore(keyFile(options.keys));
      const { key, record } = await store.create(tenant, options.label, limits, permissions);
      const own = [
        ...(record.limits === undefined ? [] : [`limits ${describeLimits(record.limits)}`]),
        ...(record.permissions === undefined ? [] : [`permission ${record.permissions.join(", ")}`]),
      ];
      io.stdout.write(`${key}\n`);
      io.stderr.write(
        `ctxkit: key ${record.id} for tenant "${record.tenant}"${own.length === 0 ? "" : ` with ${own.join(" and ")}`} ` +
          `stored hashed in ${store.path}; copy it now, it is not shown again\n`,
      );
    },
  );
  keysCommand
    .command("list")
    .description(
      "list the keys (ids, tenants, labels, own limits and permissions; the keys themselves are not stored)",
    )
    .addOption(keysOption())
    .action(async (options: { keys?: string }) => {
      const records = await new JsonFileKeyStore(keyFile(options.keys)).list();
      if (records.length === 0) io.stdout.write("no keys; create one with: ctxkit serve keys add <tenant>\n");
      for (const record of records) {
        const limits = record.limits === undefined ? "" : `  limits: ${describeLimits(record.limits)}`;
        const permissions = record.permissions?.length
          ? `  permissions: ${record.permissions.join(", ")}`
          : "";
        io.stdout.write(
          `${record.id}  ${record.tenant}  ${record.createdAt}${record.label ? `  ${record.label}` : ""}${limits}${permissions}\n`,
        );
      }
    });
  keysCommand
    .command("revoke")
    .description("revoke a key by its id (running servers stop accepting it at once)")
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
    .description("serve the HTTP API, the OpenAI-compatible proxy and the inspector")
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
    .option(
      "--prompt-cache-key",
      "send the session id upstream as OpenAI's prompt_cache_key (default: only to providers known to take it, openai)",
    )
    .option("--no-prompt-cache-key", "never send prompt_cache_key upstream")
    .option(
      "--reasoning-content",
      "send tool-calling turns' reasoning back as reasoning_content (DeepSeek needs it; default on but for " +
        "openai, anthropic and google)",
    )
    .option("--no-reasoning-content", "never send reasoning_content upstream")
    .option("--no-auth", "no API keys: every request is tenant local (127.0.0.1 only)")
    .option("--keys <file>", "API key file (default ~/.ctxkit/server-keys.json)")
    .option(
      "--executor <name=command>",
      "an execution agent for /v1/sync (repeatable)",
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .option(
      "--sync-retention-days <days>",
      "delete /v1/sync sessions (agent ctxkit-sync, every tenant's) idle for more than this many days, at start " +
        "(default: never delete)",
    )
    .option(
      "--pipeline <module>",
      "governance pipeline module: its default export is a pipeline, or a function of the preset's returning one",
    )
    .option("--memory-in-context", "put each tenant's core memories in its sessions' system prompts")
    .option(
      "--public-metrics",
      "serve /metrics without a key, for a scraper on a private network (default: only keys made with " +
        "keys add --metrics)",
    )
    .option(
      "--tenant-limits <file>",
      'JSON limits by tenant, e.g. {"acme": {"rateLimit": {"requestsPerSecond": 20, "burst": 40}}} (see docs/deploy.md)',
    );
  addLimitOptions(serveCommand, "per-key", {
    rateLimit: "1000/2000/5",
    maxBody: "4MiB",
    upstreamTimeout: "120",
  }).action(async (flags: ServeFlags) => (await import("../serve/run-serve.ts")).runServe(flags, io));
  registerKeys(serveCommand, io);
};
