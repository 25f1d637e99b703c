import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

/** The native binary `@anthropic-ai/claude-code` installs for this platform (its `bin/claude.exe` is a stub). */
function claudeBinary(): string | undefined {
  const platform = `${process.platform}-${process.arch}`;
  try {
    const root = dirname(require.resolve(`@anthropic-ai/claude-code-${platform}/package.json`));
    const binary = join(root, process.platform === "win32" ? "claude.exe" : "claude");
    return existsSync(binary) ? binary : undefined;
  } catch {
    return undefined;
  }
}

/** True when this process may make a loopback-only network namespace (root, util-linux, iproute2). */
function canIsolate(): boolean {
  const probe = spawnSync("unshare", ["-n", "sh", "-c", "ip link set lo up"], { stdio: "ignore" });
  return probe.status === 0;
}

const claude = claudeBinary();
const isolated = canIsolate();
if (claude === undefined || !isolated) {
  console.warn(
    `claude code e2e skipped: ${claude === undefined ? "no @anthropic-ai/claude-code binary for this platform" : "cannot create a network namespace (needs root and unshare -n; CI runs as root)"}`,
  );
}

type Block = { type: string; text?: string; content?: unknown };
interface Report {
  exitCode: number | null;
  output: string;
  file: string;
  steps: number;
  upstream: {
    path: string;
    model: string;
    apiKey: string;
    tools: number;
    system: unknown;
    messages: { role: string; content: string | Block[] }[];
  }[];
  session: { status: number; body: { session?: { id: string; messageCount: number; stored: boolean } } };
  timeline: { status: number; body: { requests?: unknown[] } };
  stored: { role: string; kind?: string; content: Block[] }[];
  sessions: number;
}

/** Runs the child script in a loopback-only network namespace and returns its report. */
async function runClaudeCode(
  mode: "stateful" | "stateless" | "subagent" | "background" | "compact",
): Promise<Report> {
  const dir = mkdtempSync(join(tmpdir(), "ctxkit-claude-"));
  try {
    const report = join(dir, "report.json");
    const child = spawn(
      "unshare",
      [
        "-n",
        "sh",
        "-c",
        'ip link set lo up && exec "$0" "$@"',
        process.execPath,
        join(here, "claude-code-e2e-child.ts"),
        report,
        claude!,
        dir,
        mode,
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let log = "";
    child.stdout.on("data", (chunk: Buffer) => (log += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (log += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    if (code !== 0) throw new Error(`the claude code e2e child failed (${code}):\n${log}`);
    return JSON.parse(readFileSync(report, "utf8")) as Report;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The Read tool's result in a request: the text of the tool_result answering `toolu_read`. */
function readResult(request: Report["upstream"][number]): string {
  for (const message of request.messages)
    if (typeof message.content !== "string")
      for (const block of message.content)
        if (block.type === "tool_result" && (block as { tool_use_id?: string }).tool_use_id === "toolu_read")
          return JSON.stringify(block.content);
  return "";
}

describe.runIf(claude !== undefined && isolated)(
  "Claude Code through ctxkit (claude -p, loopback-only network)",
  () => {
    it("runs a small coding task with Claude Code's real tools; ctxkit governs, stores and shows the session", async () => {
      const result = await runClaudeCode("stateful");

      // The agent finished: every scripted step was asked for, Claude Code's Edit tool really edited the file.
      expect(result.exitCode, result.output).toBe(0);
      expect(result.steps).toBe(4);
      expect(result.output).toContain("notes.txt now says status: final.");
      expect(result.file.startsWith("status: final\n")).toBe(true);

      // The upstream got Anthropic Messages requests with the server's own key, never the client's.
      expect(result.upstream.length).toBeGreaterThanOrEqual(4);
      expect(result.upstream.every((request) => request.path.startsWith("/v1/messages"))).toBe(true);
      expect(result.upstream.every((request) => request.apiKey === "sk-ant-upstream")).toBe(true);
      // Governed: once the 40 KB read was in, a checkpoint cut it down in later requests, though they hold more.
      const reads = result.upstream.map(readResult);
      const full = reads.findIndex((text) => text.includes("line 499"));
      expect(full).toBeGreaterThanOrEqual(0);
      expect(reads.at(-1)!.length).toBeGreaterThan(0);
      expect(reads.at(-1)!.length).toBeLessThan(reads[full]!.length / 2);

      // The session is stored once (Claude Code resent its whole history each time), with the whole read …
      const original = result.stored.filter((message) => message.kind === undefined);
      expect(original.map((message) => message.role)).toEqual([
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
      ]);
      expect(JSON.stringify(original[2]!.content)).toContain("line 499");
      // … and visible through the inspector API.
      expect(result.session.status).toBe(200);
      expect(result.session.body.session).toMatchObject({ id: "claude-code-e2e", stored: true });
      expect(result.timeline.status).toBe(200);
      expect(result.timeline.body.requests).toHaveLength(4);
    }, 180_000);

    it.each(["subagent", "background"] as const)(
      "keeps a subagent's conversation out of the session (%s): its requests, on the same header, go upstream on their own",
      async (mode) => {
        const result = await runClaudeCode(mode);
        expect(result.exitCode, result.output).toBe(0);
        expect(result.output).toContain("The subagent says 42.");
        // Claude Code's Agent tool ran a subagent: its requests carry the session header too, and go upstream
        // holding only the subagent's own conversation (its task first), never the main conversation's.
        const task = "Ask a subagent what six times seven is.";
        const holds = (request: Report["upstream"][number], text: string) =>
          JSON.stringify(request.messages).includes(text);
        const isSubagent = (request: Report["upstream"][number]) =>
          JSON.stringify(request.messages[0]).includes("SUBTASK-7") ||
          JSON.stringify(request.system).includes("cc_is_subagent=true");
        const subagent = result.upstream.filter(isSubagent);
        expect(subagent.length).toBeGreaterThanOrEqual(1);
        for (const request of subagent) expect(holds(request, task)).toBe(false);
        // The main conversation went on intact, and the session holds it alone: one stored reply per request.
        const main = result.upstream.filter((request) => !isSubagent(request));
        for (const request of main) expect(JSON.stringify(request.messages[0])).toContain(task);
        const original = result.stored.filter((message) => message.kind === undefined);
        expect(JSON.stringify(original[0]!.content)).toContain(task);
        expect(original.filter((message) => message.role === "assistant")).toHaveLength(main.length);
        expect(result.timeline.body.requests).toHaveLength(main.length);
        if (mode === "subagent") {
          // The task, the Agent call, the subagent's hand-back as its result, the answer.
          expect(main).toHaveLength(2);
          expect(original.map((message) => message.role)).toEqual(["user", "assistant", "tool", "assistant"]);
        }
      },
      180_000,
    );

    it("lets Claude Code's /compact summarise the conversation without storing the summary, and the session goes on", async () => {
      const result = await runClaudeCode("compact");
      expect(result.exitCode, result.output).toBe(0);
      expect(result.output).not.toContain("Error");
      expect(result.output).toContain("Also 42.");
      // The summary request resends the history without the latest reply, then asks for the summary: a branch
      // of the conversation, forwarded as it came (before, ctxkit refused it: the tool result was stored already).
      const summary = result.upstream.find((request) =>
        JSON.stringify(request.messages).includes("<summary>"),
      );
      expect(summary).toBeDefined();
      expect(JSON.stringify(summary!.messages[0])).toContain("Ask a subagent what six times seven is.");
      // The session holds the conversation, the next question and its answer, and not the summary exchange.
      const original = result.stored.filter((message) => message.kind === undefined);
      expect(original.map((message) => message.role)).toEqual([
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
      ]);
      expect(JSON.stringify(original.at(-1)!.content)).toContain("Also 42.");
      expect(JSON.stringify(original)).not.toContain("<summary>");
      expect(result.timeline.body.requests).toHaveLength(3);
    }, 180_000);

    it("without a session header, governs Claude Code's requests statelessly and stores nothing", async () => {
      const result = await runClaudeCode("stateless");
      expect(result.exitCode, result.output).toBe(0);
      expect(result.steps).toBe(4);
      expect(result.file.startsWith("status: final\n")).toBe(true);
      expect(result.sessions).toBe(0);
      const reads = result.upstream.map(readResult);
      const full = reads.findIndex((text) => text.includes("line 499"));
      expect(reads.at(-1)!.length).toBeLessThan(reads[full]!.length);
      // Claude Code's environment (a system message inside messages) stays where it sent it, never summarised.
      for (const request of result.upstream.filter((entry) => entry.tools > 0)) {
        expect(request.messages[1]?.role).toBe("system");
        expect(JSON.stringify(request.messages[1]?.content)).toContain("Primary working directory");
      }
    }, 180_000);
  },
);
