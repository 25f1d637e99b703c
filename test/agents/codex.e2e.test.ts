import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

/** The platform binary `@openai/codex` ships (its `bin/codex.js` only finds and runs it). */
function codexBinary(): string | undefined {
  const triples: Record<string, string> = {
    "linux-x64": "x86_64-unknown-linux-musl",
    "linux-arm64": "aarch64-unknown-linux-musl",
    "darwin-x64": "x86_64-apple-darwin",
    "darwin-arm64": "aarch64-apple-darwin",
  };
  const platform = `${process.platform}-${process.arch}`;
  const triple = triples[platform];
  if (triple === undefined) return undefined;
  try {
    const root = dirname(require.resolve(`@openai/codex-${platform}/package.json`));
    const binary = join(root, "vendor", triple, "bin", "codex");
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

const codex = codexBinary();
const isolated = canIsolate();
if (codex === undefined || !isolated) {
  console.warn(
    `codex e2e skipped: ${codex === undefined ? "no @openai/codex binary for this platform" : "cannot create a network namespace (needs root and unshare -n; CI runs as root)"}`,
  );
}

interface Report {
  exitCode: number | null;
  output: string;
  file: string;
  steps: number;
  upstream: { path: string; store: unknown; input: unknown; tools: number; metadata: unknown }[];
  session: { status: number; body: { session?: { id: string; messageCount: number; stored: boolean } } };
  timeline: { status: number; body: { requests?: unknown[] } };
  stored: { role: string; kind?: string }[];
  sessions: number;
}

/** Runs the child script in a loopback-only network namespace and returns its report. */
async function runCodex(mode: "stateful" | "stateless"): Promise<Report> {
  const dir = mkdtempSync(join(tmpdir(), "ctxkit-codex-"));
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
        join(here, "codex-e2e-child.ts"),
        report,
        codex!,
        dir,
        mode,
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let log = "";
    child.stdout.on("data", (chunk: Buffer) => (log += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (log += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    if (code !== 0) throw new Error(`the codex e2e child failed (${code}):\n${log}`);
    return JSON.parse(readFileSync(report, "utf8")) as Report;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.runIf(codex !== undefined && isolated)(
  "Codex through ctxkit (codex exec, loopback-only network)",
  () => {
    it("runs a small coding task with Codex's real tools; ctxkit governs, stores and shows the session", async () => {
      const result = await runCodex("stateful");

      // The agent finished: every scripted step was asked for, Codex's shell really edited the file.
      expect(result.exitCode, result.output).toBe(0);
      expect(result.steps).toBe(4);
      expect(result.output).toContain("notes.txt now says status: final.");
      expect(result.file.startsWith("status: final\n")).toBe(true);
      // Codex ran with its analytics off (the namespace has no network besides loopback anyway).
      expect(JSON.stringify(result.upstream[0]?.metadata)).toContain(String.raw`\"analytics_enabled\":false`);

      // The upstream got governed Responses requests: never stored upstream, a checkpoint summarised the start,
      // and later requests carry less than the one with the file's full text.
      expect(result.upstream.map((request) => request.path)).toEqual(Array(4).fill("/v1/responses"));
      expect(result.upstream.every((request) => request.store === false && request.tools > 0)).toBe(true);
      const inputs = result.upstream.map((request) => JSON.stringify(request.input));
      expect(inputs.some((input) => input.includes("<conversation-summary>"))).toBe(true);
      const sizes = inputs.map((input) => input.length);
      expect(sizes.at(-1)!).toBeLessThan(sizes[1]!);

      // The session is stored (Codex resent its whole history each time: each message is stored once).
      const original = result.stored.filter((message) => message.kind === undefined);
      expect(original.map((message) => message.role)).toEqual([
        "user",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
      ]);
      expect(result.stored.some((message) => message.kind === "summary")).toBe(true);
      // … and visible through the inspector API.
      expect(result.session.status).toBe(200);
      expect(result.session.body.session).toMatchObject({ id: "codex-e2e", stored: true });
      expect(result.session.body.session?.messageCount).toBeGreaterThanOrEqual(9);
      expect(result.timeline.status).toBe(200);
      expect(result.timeline.body.requests).toHaveLength(4);
    }, 180_000);

    it("without a session header, governs Codex's store:false requests statelessly and stores nothing", async () => {
      const result = await runCodex("stateless");
      expect(result.exitCode, result.output).toBe(0);
      expect(result.steps).toBe(4);
      expect(result.file.startsWith("status: final\n")).toBe(true);
      expect(result.upstream.every((request) => request.store === false)).toBe(true);
      const inputs = result.upstream.map((request) => JSON.stringify(request.input));
      expect(inputs.some((input) => input.includes("<conversation-summary>"))).toBe(true);
      expect(result.sessions).toBe(0);
    }, 180_000);
  },
);
