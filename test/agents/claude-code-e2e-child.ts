/**
 * The Claude Code end-to-end run, as one process inside a loopback-only network namespace: a scripted Anthropic
 * Messages upstream, `ctxkit serve`'s server in front of it, and `claude -p` pointed at that server. It writes
 * what the test asserts as JSON to the path given as its first argument.
 *
 * Usage: node claude-code-e2e-child.ts <report.json> <claude binary> <temp dir> [stateful|stateless|subagent|background|compact]
 * (stateful: Claude Code sends `X-Ctxkit-Session: claude-code-e2e`; stateless: no header, so its requests are
 * governed without being stored; subagent: with the header, the model delegates a question to a subagent
 * through Claude Code's Agent tool, whose requests carry the same header; background: the same, the subagent
 * running in the background while the main conversation goes on; compact: the subagent run, then
 * `claude -p --continue /compact`, then one more question with `--continue`).
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

const [reportPath, claude, dir, mode = "stateful"] = process.argv.slice(2) as [
  string,
  string,
  string,
  string?,
];
const SESSION = "claude-code-e2e";
/** Where the server stores it: the tenant's scoped id. */
const STORED_SESSION = `claude-user/${SESSION}`;
const work = join(dir, "work");
const home = join(dir, "home");
mkdirSync(work, { recursive: true });
mkdirSync(home, { recursive: true });
const notes = join(work, "notes.txt");
const filler = Array.from({ length: 500 }, (_, line) => `line ${line}: ${"lorem ipsum ".repeat(6)}`).join(
  "\n",
);
writeFileSync(notes, `status: draft\n${filler}\n`);

/** The scripted model: read the file, edit it, run a command, answer — one step per agent request. */
const steps: FakeOpenAIResponse[] = [
  { toolCalls: [{ id: "toolu_read", name: "Read", arguments: { file_path: notes } }] },
  {
    toolCalls: [
      {
        id: "toolu_edit",
        name: "Edit",
        arguments: { file_path: notes, old_string: "status: draft", new_string: "status: final" },
      },
    ],
  },
  {
    toolCalls: [
      {
        id: "toolu_check",
        name: "Bash",
        arguments: { command: "head -n 1 notes.txt", description: "Show the first line" },
      },
    ],
  },
  { text: "notes.txt now says status: final." },
];
/** The subagent mode's task for the subagent: its requests are the ones holding it in a user message. */
const SUBTASK = "SUBTASK-7: what is six times seven?";

/** The subagent mode's model: delegate to a subagent, which answers; then report its answer. */
function delegating(request: FakeOpenAIRequest): FakeOpenAIResponse {
  // The compact mode's second run is `/compact`: Claude Code's summary request.
  if (run === 2)
    return { text: "<analysis>Done.</analysis>\n<summary>The user asked for six times seven: 42.</summary>" };
  const messages = request.body.messages ?? [];
  // The subagent's conversation starts with its task.
  if (JSON.stringify(messages[0]).includes(SUBTASK)) return { text: "Six times seven is 42." };
  const users = JSON.stringify(messages.filter((message) => message.role === "user"));
  if (request.body.tools === undefined) return { text: "ok" };
  step++;
  if (run === 3) return { text: "Also 42." };
  if (users.includes("toolu_agent")) return { text: "The subagent says 42." };
  return {
    toolCalls: [
      {
        id: "toolu_agent",
        name: "Agent",
        arguments: {
          description: "Multiply two numbers",
          prompt: SUBTASK,
          subagent_type: "general-purpose",
          run_in_background: mode === "background",
        },
      },
    ],
  };
}

let step = 0;
/** Which `claude -p` run is going on (1-based). */
let run = 0;
const upstream = await startFakeOpenAIServer({
  responses: (request: FakeOpenAIRequest) =>
    mode === "subagent" || mode === "background" || mode === "compact"
      ? delegating(request)
      : // Requests without tools are Claude Code's side requests (titles and the like): they get a plain answer.
        request.body.tools === undefined
        ? { text: "ok" }
        : (steps[step++] ?? { text: "done" }),
});
const keys = new MemoryKeyStore();
const key = (await keys.create("claude-user")).key;
const store = new MemorySessionStore();
const server = await startServer({
  store,
  memory: new InMemoryMemoryStore(),
  keys,
  port: 0,
  anthropicUpstream: { baseURL: upstream.url, apiKey: "sk-ant-upstream", auth: "x-api-key" },
  engine: {
    // Claude Code's system prompt and tools alone are ~10k tokens: the 40 KB file cannot go in whole.
    contextWindow: 24_000,
    maxOutputTokens: 2_000,
    tokenCounter: new FakeTokenCounter(),
    summarizer: new FakeSummarizer(),
  },
  log: () => undefined,
  webRoot: false,
});

/** One `claude -p` run with these arguments: its exit code and output. */
async function runClaude(args: readonly string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(claude, ["-p", ...args, "--permission-mode", "acceptEdits"], {
    cwd: work,
    env: {
      PATH: process.env["PATH"] ?? "/usr/bin:/bin",
      HOME: home,
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: key,
      ...(mode !== "stateless" && { ANTHROPIC_CUSTOM_HEADERS: `X-Ctxkit-Session: ${SESSION}` }),
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_ERROR_REPORTING: "1",
      DISABLE_AUTOUPDATER: "1",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => child.kill(), 150_000);
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  clearTimeout(timer);
  return { code, output };
}

/** The runs of each mode; compact: delegate, then `/compact` the conversation, then go on with it. */
const runs: readonly (readonly string[])[] =
  mode === "stateful" || mode === "stateless"
    ? [["Mark notes.txt as final, then check it.", "--allowedTools", "Read,Edit,Bash"]]
    : [
        ["Ask a subagent what six times seven is.", "--allowedTools", "Agent"],
        ...(mode === "compact"
          ? [
              ["--continue", "/compact"],
              ["--continue", "And what is seven times six?"],
            ]
          : []),
      ];
let exitCode: number | null = 0;
let output = "";
for (const args of runs) {
  run++;
  const ran = await runClaude(args);
  output += ran.output;
  exitCode = ran.code;
  if (exitCode !== 0) break;
}

const get = async (path: string) => {
  const response = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.status, body: (await response.json()) as unknown };
};
const report = {
  exitCode,
  output,
  file: readFileSync(notes, "utf8"),
  steps: step,
  upstream: upstream.requests.map((request) => ({
    path: request.path,
    model: request.body.model,
    apiKey: request.headers["x-api-key"],
    tools: (request.body.tools ?? []).length,
    system: request.body["system"],
    messages: request.body.messages,
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
