/**
 * The Codex end-to-end run, as one process inside a loopback-only network namespace: a scripted Responses
 * upstream, `ctxkit serve`'s server in front of it, and `codex exec` pointed at that server. It writes what the
 * test asserts as JSON to the path given as its first argument.
 *
 * Usage: node codex-e2e-child.ts <report.json> <codex binary> <temp dir> [stateful|stateless]
 * (stateful: Codex sends `X-Ctxkit-Session: codex-e2e`; stateless: no header, so its `store: false` requests
 * are governed without being stored).
 */
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MemoryKeyStore } from "../../src/server/auth/memory-key-store.ts";
import { startServer } from "../../src/server/start-server.ts";
import { InMemoryMemoryStore } from "../../src/memory/in-memory-memory-store.ts";
import { MemorySessionStore } from "../../src/store/memory/index.ts";
import { startFakeOpenAIServer, type FakeOpenAIRequest } from "../../src/test/fake-openai-server.ts";
import type { FakeOpenAIResponse } from "../../src/test/fake-openai-responses.ts";
import { FakeSummarizer } from "../../src/test/fake-summarizer.ts";
import { FakeTokenCounter } from "../../src/test/fake-token-counter.ts";

const [reportPath, codex, dir, mode = "stateful"] = process.argv.slice(2) as [
  string,
  string,
  string,
  string?,
];
const SESSION = "codex-e2e";
/** Where the server stores it: the tenant's scoped id. */
const STORED_SESSION = `codex-user/${SESSION}`;
const work = join(dir, "work");
const home = join(dir, "home");
mkdirSync(work, { recursive: true });
mkdirSync(home, { recursive: true });
const filler = Array.from({ length: 500 }, (_, line) => `line ${line}: ${"lorem ipsum ".repeat(6)}`).join(
  "\n",
);
writeFileSync(join(work, "notes.txt"), `status: draft\n${filler}\n`);

/** The scripted model: read the file, edit it, run a command, answer — one step per agent request. */
const steps: FakeOpenAIResponse[] = [
  { toolCalls: [{ id: "call_read", name: "exec_command", arguments: { cmd: "cat notes.txt" } }] },
  {
    toolCalls: [
      {
        id: "call_edit",
        name: "exec_command",
        arguments: { cmd: "sed -i 's/status: draft/status: final/' notes.txt" },
      },
    ],
  },
  { toolCalls: [{ id: "call_check", name: "exec_command", arguments: { cmd: "head -n 1 notes.txt" } }] },
  { text: "notes.txt now says status: final." },
];
let step = 0;
const upstream = await startFakeOpenAIServer({
  responses: (request: FakeOpenAIRequest) =>
    // Requests without tools are Codex's side requests (none are expected): they get a plain answer.
    request.body.tools === undefined ? { text: "ok" } : (steps[step++] ?? { text: "done" }),
});
const keys = new MemoryKeyStore();
const key = (await keys.create("codex-user")).key;
const store = new MemorySessionStore();
const server = await startServer({
  store,
  memory: new InMemoryMemoryStore(),
  keys,
  port: 0,
  upstream: { baseURL: upstream.url, apiKey: "sk-upstream", model: "fake-model" },
  engine: {
    contextWindow: 8_000,
    maxOutputTokens: 1_000,
    tokenCounter: new FakeTokenCounter(),
    summarizer: new FakeSummarizer(),
  },
  log: () => undefined,
  webRoot: false,
});

writeFileSync(
  join(home, "config.toml"),
  `model = "fake-model"
model_provider = "ctxkit"
check_for_update_on_startup = false

[analytics]
enabled = false

[feedback]
enabled = false

[model_providers.ctxkit]
name = "ctxkit"
base_url = "${server.url}/v1"
env_key = "CTXKIT_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
${mode === "stateful" ? `http_headers = { "X-Ctxkit-Session" = "${SESSION}" }` : ""}
`,
);

const child = spawn(
  codex,
  ["exec", "--skip-git-repo-check", "-s", "danger-full-access", "Mark notes.txt as final, then check it."],
  {
    cwd: work,
    env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", HOME: home, CODEX_HOME: home, CTXKIT_API_KEY: key },
    stdio: ["ignore", "pipe", "pipe"],
  },
);
let output = "";
child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
const exitCode = await new Promise<number | null>((resolve) => child.on("exit", resolve));

const get = async (path: string) => {
  const response = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.status, body: (await response.json()) as unknown };
};
const report = {
  exitCode,
  output,
  file: readFileSync(join(work, "notes.txt"), "utf8"),
  steps: step,
  upstream: upstream.requests.map((request) => ({
    path: request.path,
    store: request.body["store"],
    input: request.body.input,
    tools: (request.body.tools ?? []).length,
    metadata: request.body["client_metadata"],
  })),
  session: await get(`/v1/sessions/${SESSION}`),
  timeline: await get(`/v1/sessions/${SESSION}/timeline`),
  stored:
    (await store.getSession(STORED_SESSION)) === undefined
      ? []
      : await store.loadMessages(STORED_SESSION, { strategy: "all" }),
  sessions: (await store.listSessions()).sessions.length,
};
writeFileSync(reportPath, JSON.stringify(report));
await server.close();
await upstream.close();
