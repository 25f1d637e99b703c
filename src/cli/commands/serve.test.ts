import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { bundled } from "../../../test/support/bundled.ts";
import { transcriptPath } from "../../../test/support/transcripts.ts";
import { messageText } from "../../model/blocks.ts";
import { generateApiKey } from "../../server/auth/api-key.ts";
import { openSqliteSessionStore } from "../../store/sqlite/index.ts";
import { startFakeOpenAIServer, type FakeOpenAIServer } from "../../test/fake-openai-server.ts";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const node = join(root, "node_modules/.bin/node");
const bin = bundled("ctxkit");

let home: string;
let upstream: FakeOpenAIServer;
let key: string;

/** The environment of a child: a private home, no settings or keys from this machine. */
function childEnv(): NodeJS.ProcessEnv {
  return {
    PATH: process.env["PATH"],
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    NODE_COMPILE_CACHE: process.env["NODE_COMPILE_CACHE"],
  };
}

function runSync(...args: string[]) {
  return spawnSync(node, [bin, ...args], { cwd: home, env: childEnv(), encoding: "utf8", timeout: 60_000 });
}

/** Runs a CLI command as a process without waiting for it, so several can run at once. */
function run(...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(node, [bin, ...args], { cwd: home, env: childEnv() });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once("close", (status) => resolve({ status, stdout, stderr })));
}

interface Served {
  readonly url: string;
  readonly stdout: () => string;
  readonly stderr: () => string;
  readonly exited: Promise<number | null>;
  stop(signal: NodeJS.Signals): Promise<number | null>;
}

/** Starts `ctxkit serve …` as a process and waits for its "listening on" line. */
function serve(...args: string[]): Promise<Served> {
  const child = spawn(node, [bin, "serve", "--port", "0", ...args], { cwd: home, env: childEnv() });
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const url = /listening on (http:\/\/\S+)/.exec(stdout)?.[1];
      if (url !== undefined && /sync: .*\n/.test(stdout)) {
        resolve({
          url,
          stdout: () => stdout,
          stderr: () => stderr,
          exited,
          stop: (signal) => {
            child.kill(signal);
            return exited;
          },
        });
      }
    });
    void exited.then((code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
  });
}

/** Waits until `check` holds (output of a child arrives on two pipes, in no set order). */
async function eventually(check: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 200 && !check(); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "ctxkit-serve-"));
  upstream = await startFakeOpenAIServer({
    responses: (request) => ({ text: `reply ${request.index + 1}` }),
  });
  const created = runSync("serve", "keys", "add", "acme", "--label", "test");
  expect(created.status, created.stderr).toBe(0);
  key = created.stdout.trim();
  expect(key).toMatch(/^ctxk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
  expect(created.stderr).toMatch(/stored hashed .*not shown again/);
});

afterAll(async () => {
  await upstream.close();
  rmSync(home, { recursive: true, force: true });
});

describe("ctxkit serve keys", () => {
  it("stores the key hashed (never the key itself), lists and revokes it", () => {
    const file = readFileSync(join(home, ".ctxkit", "server-keys.json"), "utf8");
    expect(file).not.toContain(key);
    expect(file).toContain(key.slice(5, 17));
    const listed = runSync("serve", "keys", "list");
    expect(listed.stdout).toMatch(new RegExp(`^${key.slice(5, 17)}  acme  \\S+  test\\n$`));
    expect(listed.stdout).not.toContain(key);

    const other = runSync(
      "serve",
      "keys",
      "add",
      "globex",
      "--keys",
      join(home, "other-keys.json"),
    ).stdout.trim();
    const revoked = runSync(
      "serve",
      "keys",
      "revoke",
      other.slice(5, 17),
      "--keys",
      join(home, "other-keys.json"),
    );
    expect(revoked.status).toBe(0);
    const again = runSync(
      "serve",
      "keys",
      "revoke",
      other.slice(5, 17),
      "--keys",
      join(home, "other-keys.json"),
    );
    expect(again.status).toBe(2);
    expect(again.stderr).toMatch(/^ctxkit: .*no key with id/);
    const bad = runSync("serve", "keys", "add", "no spaces allowed");
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).not.toMatch(/\n\s+at /);
  });

  it("a bad tenant name is one actionable line and exit 2", () => {
    const bad = runSync("serve", "keys", "add", "bad tenant!", "--keys", join(home, "bad-tenant-keys.json"));
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^ctxkit: invalid tenant: .*letters, digits, '\.', '_' or '-'\n$/);
    expect(bad.stdout).toBe("");
  });

  it("keys add|list|revoke --keys F use F, and a server started with --keys F accepts F's keys", async () => {
    const file = join(home, "flag-keys.json");
    const defaultFile = join(home, ".ctxkit", "server-keys.json");
    const before = readFileSync(defaultFile, "utf8");
    const added = runSync("serve", "keys", "add", "initech", "--keys", file);
    expect(added.status, added.stderr).toBe(0);
    const flagKey = added.stdout.trim();
    const id = flagKey.slice(5, 17);
    expect(added.stderr).toContain(file);
    expect(readFileSync(file, "utf8")).toContain(id);
    expect(readFileSync(defaultFile, "utf8")).toBe(before);
    expect(runSync("serve", "keys", "list", "--keys", file).stdout).toMatch(new RegExp(`^${id}  initech `));

    const upstreamKey = "AIzaSyUpstream0123456789abcdefghijklmn";
    const served = await serve(
      "--db",
      join(home, "flag-keys.db"),
      "--keys",
      file,
      "--upstream",
      `http://127.0.0.1:9/v1?key=${upstreamKey}`,
    );
    expect(served.stdout()).toContain("upstream: http://127.0.0.1:9/v1?key=[redacted]");
    expect(served.stdout()).not.toContain(upstreamKey);
    try {
      const me = (secret: string) =>
        fetch(`${served.url}/v1/me`, { headers: { authorization: `Bearer ${secret}` } });
      expect(await (await me(flagKey)).json()).toEqual({ tenant: "initech", auth: true });
      expect((await me(key)).status).toBe(401); // a key of the default file is not valid here
      expect(runSync("serve", "keys", "revoke", id, "--keys", file).status).toBe(0);
      expect((await me(flagKey)).status).toBe(401);
    } finally {
      await served.stop("SIGTERM");
    }
  });

  it("keys add --metrics makes the operator's key: only it reads /metrics (an old key file's tenant key gets 403), unless --public-metrics", async () => {
    const file = join(home, "metrics-keys.json");
    const old = generateApiKey();
    const oldRecord = { id: old.id, tenant: "acme", hash: old.hash, createdAt: "2026-01-01T00:00:00.000Z" };
    writeFileSync(file, JSON.stringify({ version: 1, keys: [oldRecord] }), { mode: 0o600 });
    const added = runSync(
      "serve",
      ...["keys", "add", "monitoring", "--metrics", "--label", "prometheus", "--keys", file],
    );
    expect(added.status, added.stderr).toBe(0);
    const operator = added.stdout.trim();
    const id = operator.slice(5, 17);
    expect(added.stderr).toContain(`key ${id} for tenant "monitoring" with permission metrics stored hashed`);
    const stored = JSON.parse(readFileSync(file, "utf8")) as { keys: Record<string, unknown>[] };
    expect(stored.keys[0]).toEqual(oldRecord);
    expect(stored.keys[1]?.["permissions"]).toEqual(["metrics"]);
    const created = String(stored.keys[1]?.["createdAt"]);
    expect(runSync("serve", "keys", "list", "--keys", file).stdout).toBe(
      `${old.id}  acme  ${oldRecord.createdAt}\n${id}  monitoring  ${created}  prometheus  permissions: metrics\n`,
    );

    const metrics = (url: string, secret?: string) =>
      fetch(`${url}/metrics`, secret === undefined ? {} : { headers: { authorization: `Bearer ${secret}` } });
    const served = await serve("--db", join(home, "metrics-keys.db"), "--keys", file);
    try {
      expect(served.stdout()).toMatch(/metrics: +\/metrics for keys with the metrics permission/);
      const me = await fetch(`${served.url}/v1/me`, { headers: { authorization: `Bearer ${old.key}` } });
      expect(await me.json()).toEqual({ tenant: "acme", auth: true });
      const refused = await metrics(served.url, old.key);
      expect(refused.status).toBe(403);
      expect(await refused.json()).toMatchObject({
        error: { code: "forbidden", message: expect.stringContaining('"metrics" permission') },
      });
      const answer = await metrics(served.url, operator);
      expect(answer.status).toBe(200);
      expect(await answer.text()).toContain('route="/v1/me",status="200"');
      expect((await metrics(served.url)).status).toBe(401);
    } finally {
      await served.stop("SIGTERM");
    }
    const open = await serve("--db", join(home, "metrics-keys.db"), "--keys", file, "--public-metrics");
    try {
      expect(open.stdout()).toMatch(/metrics: +\/metrics needs no key \(--public-metrics\)/);
      expect((await metrics(open.url)).status).toBe(200);
      expect((await metrics(open.url, old.key)).status).toBe(200);
    } finally {
      await open.stop("SIGTERM");
    }
  });

  it("keys add --rate-limit/--max-body/--upstream-timeout stores and lists the key's own limits, which a server applies", async () => {
    const file = join(home, "limited-keys.json");
    const added = runSync(
      "serve",
      ...["keys", "add", "acme", "--keys", file, "--label", "ci"],
      ...["--rate-limit", "1/1/0", "--max-body", "2KiB", "--upstream-timeout", "30"],
    );
    expect(added.status, added.stderr).toBe(0);
    const limitedKey = added.stdout.trim();
    const id = limitedKey.slice(5, 17);
    expect(added.stderr).toContain("with limits --rate-limit 1/1/0 --max-body 2KiB --upstream-timeout 30");
    const stored = JSON.parse(readFileSync(file, "utf8")) as { keys: { limits?: unknown }[] };
    expect(stored.keys[0]?.limits).toEqual({
      rateLimit: { requestsPerSecond: 1, burst: 1, maxWaitMs: 0 },
      maxBodyBytes: 2_048,
      upstreamTimeoutMs: 30_000,
    });
    const plainKey = runSync("serve", "keys", "add", "acme", "--keys", file).stdout.trim();
    const [limited, plain] = (JSON.parse(readFileSync(file, "utf8")) as { keys: { createdAt: string }[] })
      .keys;
    expect(runSync("serve", "keys", "list", "--keys", file).stdout).toBe(
      `${id}  acme  ${limited?.createdAt}  ci  limits: --rate-limit 1/1/0 --max-body 2KiB --upstream-timeout 30\n` +
        `${plainKey.slice(5, 17)}  acme  ${plain?.createdAt}\n`,
    );
    const bad = runSync("serve", "keys", "add", "acme", "--keys", file, "--rate-limit", "1/0");
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^ctxkit: [^\n]*--rate-limit[^\n]*\n$/);

    const tenantLimits = join(home, "tenant-limits.json");
    writeFileSync(tenantLimits, JSON.stringify({ acme: { maxBodyBytes: 4_096 } }));
    const served = await serve(
      "--db",
      join(home, "limited-keys.db"),
      "--keys",
      file,
      "--tenant-limits",
      tenantLimits,
    );
    try {
      expect(served.stdout()).toMatch(/limits: +per tenant from .*tenant-limits\.json \(acme\)/);
      const post = (secret: string, bytes: number) =>
        fetch(`${served.url}/v1/sessions`, {
          method: "POST",
          headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
          body: JSON.stringify({ pad: "x".repeat(bytes) }),
        });
      expect((await post(limitedKey, 3_000)).status).toBe(413); // the key's 2 KiB
      expect((await post(plainKey, 3_000)).status).not.toBe(413); // the tenant's 4 KiB
      expect((await post(plainKey, 5_000)).status).toBe(413);
      const me = (secret: string) =>
        fetch(`${served.url}/v1/me`, { headers: { authorization: `Bearer ${secret}` } });
      expect([(await me(limitedKey)).status, (await me(limitedKey)).status]).toEqual([200, 429]);
      expect([(await me(plainKey)).status, (await me(plainKey)).status]).toEqual([200, 200]);
    } finally {
      await served.stop("SIGTERM");
    }
    writeFileSync(tenantLimits, JSON.stringify({ acme: { maxBodyBytes: "big" } }));
    const refused = runSync(
      "serve",
      "--db",
      join(home, "limited-keys.db"),
      "--keys",
      file,
      "--tenant-limits",
      tenantLimits,
    );
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/^ctxkit: [^\n]*--tenant-limits[^\n]*acme\.maxBodyBytes[^\n]*\n$/);
  });

  it("parallel keys add processes lose no key, and a revoke racing adds really revokes", async () => {
    const file = join(home, "parallel-keys.json");
    const adds = Array.from({ length: 12 }, (_, index) =>
      run("serve", "keys", "add", `t${index}`, "--keys", file),
    );
    const results = await Promise.all(adds);
    for (const result of results) expect(result.status, result.stderr).toBe(0);
    const stored = JSON.parse(readFileSync(file, "utf8")) as { keys: { id: string; tenant: string }[] };
    expect(stored.keys.map((record) => record.tenant).sort()).toEqual(
      Array.from({ length: 12 }, (_, index) => `t${index}`).sort(),
    );

    const victim = results[0]!.stdout.trim();
    const served = await serve("--db", join(home, "parallel-keys.db"), "--keys", file);
    try {
      const status = async (secret: string) =>
        (await fetch(`${served.url}/v1/me`, { headers: { authorization: `Bearer ${secret}` } })).status;
      expect(await status(victim)).toBe(200);
      const racing = await Promise.all([
        run("serve", "keys", "revoke", victim.slice(5, 17), "--keys", file),
        ...Array.from({ length: 11 }, (_, index) => run("serve", "keys", "add", `r${index}`, "--keys", file)),
      ]);
      for (const result of racing) expect(result.status, result.stderr).toBe(0);
      expect(racing[0].stdout).toBe(`revoked ${victim.slice(5, 17)}\n`);
      expect(await status(victim)).toBe(401);
      for (const result of racing.slice(1)) expect(await status(result.stdout.trim())).toBe(200);
      for (const result of results.slice(1)) expect(await status(result.stdout.trim())).toBe(200);
    } finally {
      await served.stop("SIGTERM");
    }
  });
});

describe("ctxkit serve", () => {
  it("serves /health, refuses requests without a key, proxies a chat completion, and stops on SIGTERM", async () => {
    const db = join(home, "serve-1.db");
    const served = await serve(
      "--db",
      db,
      "--upstream",
      upstream.url,
      "--model",
      "openai-compatible:fake-model",
    );
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(served.stdout()).toContain("upstream: " + upstream.url);

    const health = await fetch(`${served.url}/health`);
    expect(await health.json()).toMatchObject({ status: "ok", auth: true });
    expect((await fetch(`${served.url}/v1/sessions`)).status).toBe(401);
    const wrong = await fetch(`${served.url}/v1/sessions`, {
      headers: { authorization: `Bearer ctxk_0123456789ab_${"A".repeat(43)}` },
    });
    expect(wrong.status).toBe(401);

    const client = new OpenAI({
      baseURL: `${served.url}/v1`,
      apiKey: key,
      maxRetries: 0,
      defaultHeaders: { "X-Ctxkit-Session": "cli-session" },
    });
    const first = await client.chat.completions.create({
      model: "anything",
      messages: [{ role: "user", content: "hello through the CLI" }],
    });
    const before = upstream.requests.length;
    expect(first.choices[0]?.message.content).toMatch(/^reply \d+$/);
    expect(upstream.requests.at(-1)?.body.model).toBe("fake-model");
    expect(before).toBeGreaterThan(0);

    expect(await served.stop("SIGTERM")).toBe(0);
    expect(served.stdout()).toMatch(/SIGTERM, shutting down\nctxkit serve: stopped\n$/);
    expect(served.stderr()).not.toContain(key);
    // Everything the client received is stored, under the tenant's scoped id.
    const store = await openSqliteSessionStore({ path: db });
    try {
      const messages = await store.loadMessages("acme/cli-session");
      expect(messages.map((message) => [message.role, messageText(message)])).toEqual([
        ["user", "hello through the CLI"],
        ["assistant", first.choices[0]!.message.content],
      ]);
      expect((await store.getSession("acme/cli-session"))?.owner).toBe("acme");
    } finally {
      await store.close();
    }
  });

  it("--pipeline: a processor of one's own, from a TypeScript module, governs every proxied request", async () => {
    // The module needs nothing from ctxkit: its default export is a function of the preset's pipeline.
    writeFileSync(
      join(home, "my-pipeline.ts"),
      [
        "type Block = { type: string; text?: string };",
        "type Message = { role: string; content: Block[] };",
        "const redact = (block: Block): Block =>",
        '  block.type === "text" ? { ...block, text: block.text!.replaceAll(/TICKET-\\d+/g, "[ticket]") } : block;',
        "export default (base: { processors: unknown[]; settings: object }) => ({",
        "  processors: [",
        "    {",
        '      name: "redact-tickets",',
        '      triggers: [{ kind: "each-message" }],',
        "      process: (messages: Message[]) =>",
        '        messages.map((message) => (message.role === "user" ? { ...message, content: message.content.map(redact) } : message)),',
        "    },",
        "    ...base.processors,",
        "  ],",
        "  settings: base.settings,",
        "});",
        "",
      ].join("\n"),
    );
    const served = await serve(
      ...["--db", join(home, "serve-pipeline.db"), "--upstream", upstream.url],
      ...["--model", "openai-compatible:fake-model", "--pipeline", "./my-pipeline.ts"],
    );
    try {
      const client = new OpenAI({
        baseURL: `${served.url}/v1`,
        apiKey: key,
        maxRetries: 0,
        defaultHeaders: { "X-Ctxkit-Session": "pipeline-session" },
      });
      await client.chat.completions.create({
        model: "anything",
        messages: [{ role: "user", content: "Where is TICKET-4711?" }],
      });
      const sent = JSON.stringify(upstream.requests.at(-1)?.body.messages);
      expect(sent).toContain("Where is [ticket]?");
      expect(sent).not.toContain("TICKET-4711");
    } finally {
      expect(await served.stop("SIGTERM")).toBe(0);
    }
  });

  it("--pipeline refuses a module that gives no pipeline in one line, exit 2", () => {
    writeFileSync(join(home, "not-a-pipeline.mjs"), "export default { processors: [{ name: 'x' }] };\n");
    const refused = runSync("serve", "--port", "0", "--no-auth", "--pipeline", "./not-a-pipeline.mjs");
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(
      /--pipeline.*not-a-pipeline\.mjs gives no pipeline: processors\.0\.process/,
    );
    expect(refused.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("takes its limits from --max-body and --rate-limit, and refuses a bad limit in one line, exit 2", async () => {
    const served = await serve(
      "--db",
      join(home, "limits.db"),
      "--max-body",
      "2KiB",
      "--rate-limit",
      "1/1/0",
    );
    try {
      const post = (bytes: number) =>
        fetch(`${served.url}/v1/sessions`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ id: "limited", pad: "x".repeat(bytes) }),
        });
      expect((await post(3_000)).status).toBe(413);
      const me = () => fetch(`${served.url}/v1/me`, { headers: { authorization: `Bearer ${key}` } });
      const statuses = [(await me()).status, (await me()).status];
      expect(statuses).toContain(429);
    } finally {
      await served.stop("SIGTERM");
    }
    const bad = runSync("serve", "--db", join(home, "limits.db"), "--rate-limit", "fast");
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^ctxkit: [^\n]*--rate-limit[^\n]*\n$/);
  });

  it("--no-auth on 127.0.0.1 says so loudly, serves tenant local, and stops on SIGINT", async () => {
    const served = await serve("--db", join(home, "serve-2.db"), "--no-auth");
    await eventually(() => served.stderr().includes("WARNING"));
    expect(served.stderr()).toMatch(/WARNING: AUTHENTICATION IS OFF \(--no-auth\)/);
    expect(served.stdout()).toMatch(/auth: +OFF/);
    expect(served.stdout()).toMatch(/upstream: none/);
    const me = await fetch(`${served.url}/v1/me`);
    expect(await me.json()).toEqual({ tenant: "local", auth: false });
    // No upstream configured: the proxy says so instead of failing obscurely.
    const proxied = await fetch(`${served.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(proxied.status).toBe(503);
    expect(await served.stop("SIGINT")).toBe(0);
    expect(served.stdout()).toMatch(/SIGINT, shutting down\nctxkit serve: stopped\n$/);
  });

  it("deletes sync sessions only with --sync-retention-days, and says so at start", async () => {
    const served = await serve(
      "--db",
      join(home, "serve-retention.db"),
      "--executor",
      "echo=cat",
      "--sync-retention-days",
      "30",
    );
    expect(served.stdout()).toMatch(
      /its sessions idle over 30 days are deleted at start, every tenant's \(--sync-retention-days\): 0 deleted now/,
    );
    expect(await served.stop("SIGINT")).toBe(0);
  });

  it("with --executor, serves the agent-sync WebSocket at /v1/sync behind the API key", async () => {
    const served = await serve("--db", join(home, "serve-3.db"), "--executor", "echo=cat");
    const url = `${served.url.replace(/^http/, "ws")}/v1/sync`;
    expect(served.stdout()).toContain(`sync:     ${url}; its sessions are kept`);
    const refused = await new Promise<number>((resolve) => {
      const socket = new WebSocket(url);
      socket.once("unexpected-response", (_request, response) => resolve(response.statusCode ?? 0));
      socket.once("open", () => resolve(101));
    });
    expect(refused).toBe(401);

    const socket = new WebSocket(url, { headers: { authorization: `Bearer ${key}` } });
    const messages: Record<string, unknown>[] = [];
    const result = new Promise<Record<string, unknown>>((resolve) =>
      socket.on("message", (data: Buffer) => {
        const message = JSON.parse(data.toString("utf8")) as Record<string, unknown>;
        messages.push(message);
        if (message["type"] === "agent_result") resolve(message);
      }),
    );
    await new Promise((resolve) => socket.once("open", resolve));
    socket.send(JSON.stringify({ type: "new_session", session_id: "phone" }));
    socket.send(JSON.stringify({ type: "user_intent", request_id: "r1", text: "list the files" }));
    // The `cat` executor answers with the message it was given: the request, in the executor's format.
    expect(String((await result)["answer"])).toContain("list the files");
    socket.close();
    expect(await served.stop("SIGTERM")).toBe(0);
  });
});

describe("ctxkit serve for someone who wants to browse their own sessions", () => {
  const short = transcriptPath("claude-code__marot-spotter/short.jsonl");
  const SHORT_ID = "55604662-cf2a-4331-851a-ec234028f8ca";

  it("shows the sessions the CLI made to tenant local (a local key, or --no-auth), and to no other tenant", async () => {
    const db = join(home, "own-sessions.db");
    const keys = join(home, "own-sessions-keys.json");
    expect(runSync("import", short, "--db", db).status).toBe(0);
    const localKey = runSync("serve", "keys", "add", "local", "--keys", keys).stdout.trim();
    const acmeKey = runSync("serve", "keys", "add", "acme", "--keys", keys).stdout.trim();
    const served = await serve("--db", db, "--keys", keys);
    try {
      expect(served.stdout()).toMatch(
        /tenant local's keys also see the sessions made by ctxkit demo, import and chat/,
      );
      const get = async (path: string, key: string) =>
        fetch(`${served.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
      const listed = (await (await get("/v1/sessions", localKey)).json()) as { sessions: { id: string }[] };
      expect(listed.sessions.map((session) => session.id)).toEqual([SHORT_ID]);
      expect((await get(`/v1/sessions/${SHORT_ID}`, localKey)).status).toBe(200);
      expect((await get(`/v1/sessions/${SHORT_ID}/messages`, localKey)).status).toBe(200);
      const found = (await (await get("/v1/sessions?q=server", localKey)).json()) as {
        sessions: { id: string }[];
      };
      expect(found.sessions.map((session) => session.id)).toEqual([SHORT_ID]);
      const foreign = (await (await get("/v1/sessions", acmeKey)).json()) as { sessions: unknown[] };
      expect(foreign.sessions).toEqual([]);
      expect((await get(`/v1/sessions/${SHORT_ID}`, acmeKey)).status).toBe(404);
    } finally {
      expect(await served.stop("SIGTERM")).toBe(0);
    }
    const open = await serve("--db", db, "--no-auth");
    try {
      const listed = (await (await fetch(`${open.url}/v1/sessions`)).json()) as {
        sessions: { id: string }[];
      };
      expect(listed.sessions.map((session) => session.id)).toEqual([SHORT_ID]);
    } finally {
      expect(await open.stop("SIGTERM")).toBe(0);
    }
  });

  it("says how to see them when there is no key yet", async () => {
    const served = await serve("--db", join(home, "no-keys.db"), "--keys", join(home, "no-keys.json"));
    await eventually(() => served.stderr().includes("no API key yet"));
    expect(served.stderr()).toMatch(/to browse your own sessions .* ctxkit serve keys add local\n/);
    expect(await served.stop("SIGTERM")).toBe(0);
  });

  it("starts without the model provider's API key; the proxy and turns name the missing key", async () => {
    const served = await serve(
      "--db",
      join(home, "no-provider-key.db"),
      "--no-auth",
      "--model",
      "anthropic:claude-sonnet-4-5",
    );
    try {
      expect(served.stdout()).toMatch(
        /upstream: none; .* until it has a key: no API key for anthropic; set ANTHROPIC_API_KEY/,
      );
      expect((await fetch(`${served.url}/v1/sessions`)).status).toBe(200);
      const post = (path: string, body: unknown) =>
        fetch(`${served.url}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
      const proxied = await post("/v1/chat/completions", {
        model: "m",
        messages: [{ role: "user", content: "hi" }],
      });
      expect(proxied.status).toBe(503);
      expect(JSON.stringify(await proxied.json())).toMatch(
        /no upstream model; no API key for anthropic; set ANTHROPIC_API_KEY.*restart ctxkit serve/,
      );
      const turn = await post("/v1/sessions/s1/turns", { message: "hi" });
      expect(turn.status).toBe(503);
      expect(JSON.stringify(await turn.json())).toContain("ANTHROPIC_API_KEY");
    } finally {
      expect(await served.stop("SIGTERM")).toBe(0);
    }
  });
});

describe("ctxkit serve error paths: one clear line, non-zero exit", () => {
  let blocker: Server;
  let busyPort: number;
  beforeAll(async () => {
    blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    busyPort = (blocker.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => blocker.close(() => resolve())));

  it.each([
    [
      "a port in use",
      () => ["--port", String(busyPort)],
      /^ctxkit: .*127\.0\.0\.1:\d+ is already in use; .*--port/,
    ],
    [
      "a bad upstream URL",
      () => ["--upstream", "not a url"],
      /^ctxkit: .*"not a url" is not an http\(s\) URL/,
    ],
    ["an ftp upstream", () => ["--upstream", "ftp://example.com/v1"], /is not an http\(s\) URL/],
    [
      "--no-auth on 0.0.0.0",
      () => ["--no-auth", "--host", "0.0.0.0"],
      /^ctxkit: .*authentication can only be turned off on 127\.0\.0\.1.*not 0\.0\.0\.0; create a key with: ctxkit serve keys add/,
    ],
    ["a bad port", () => ["--port", "70000"], /^ctxkit: .*"70000" is not a port/],
    ["a bad executor", () => ["--executor", "nocommand"], /^ctxkit: .*is not name=command/],
    [
      "sync retention without sync",
      () => ["--sync-retention-days", "7"],
      /^ctxkit: .*deletes \/v1\/sync sessions, which only --executor serves/,
    ],
    [
      "a sync retention that is not a number of days",
      () => ["--executor", "echo=cat", "--sync-retention-days", "0"],
      /^ctxkit: .*"0" is not a number of days/,
    ],
  ])("%s", (_label, args, message) => {
    const child = runSync("serve", "--db", join(home, "errors.db"), ...args());
    expect(child.status).toBe(2);
    expect(child.stderr).toMatch(message);
    expect(child.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(child.stdout).not.toContain("listening");
  });
});
