// ctxkit serve's CPU per proxied turn at a short and at a long history (issue 35: per-turn work must not grow with
// the history). Not a section of `npm run bench`; run alone while working on the proxy's hot path:
//
//   npm exec -- node bench/proxy-history-cpu.ts [other-checkout]
//
// A `ctxkit serve` (from source, SQLite, API keys, default limits) over a loopback upstream that answers at once;
// `SESSIONS` sessions grow side by side, one stateful turn after the other, to `LONG_TO` turns. The server process's
// CPU (every thread, from `/proc`) is read around two windows of turns: early (a history of 10–30 messages) and late
// (1,000+ messages). With another checkout as argument, its `ctxkit serve` runs the same way after this one's, so
// before/after come from one run. `CTXKIT_BENCH_PROFILE_KEEP=<dir>` runs the servers under `--cpu-prof` into <dir>.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startFakeOpenAIServer } from "../src/test/fake-openai-server.ts";
import { monotonicMicros } from "./support/cpu-profile.ts";
import { startListening } from "./support/listening-process.ts";

const SESSIONS = 4;
/** Turns [from, to) of each session measured as the short history (2 messages per turn). */
const SHORT = { from: 5, to: 30 } as const;
/** Turns [from, to) of each session measured as the long history. */
const LONG = { from: 500, to: 550 } as const;
const REPLY =
  "The parser now keeps comments attached to the node that follows them, and the printer wraps long lines at 100 columns. ".repeat(
    5,
  );
const repo = fileURLToPath(new URL("..", import.meta.url));

/** CPU milliseconds a process has used so far (Linux `/proc`; every thread counted). */
function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

async function measure(checkout: string, upstreamUrl: string): Promise<{ short: number; long: number }> {
  const folder = mkdtempSync(join(tmpdir(), "ctxkit-history-cpu-"));
  try {
    const env = { PATH: process.env["PATH"], HOME: folder, CTXKIT_UPSTREAM_API_KEY: "bench" };
    const bin = join(checkout, "src", "cli", "bin.ts");
    const keys = join(folder, "keys.json");
    const added = spawnSync(process.execPath, [bin, "serve", "keys", "add", "bench", "--keys", keys], {
      env,
      encoding: "utf8",
    });
    if (added.status !== 0) throw new Error(`history-cpu: keys add failed: ${added.stderr}`);
    const keep = process.env["CTXKIT_BENCH_PROFILE_KEEP"];
    const served = await startListening(
      [
        ...(keep ? ["--cpu-prof", "--cpu-prof-dir", keep] : []),
        bin,
        "serve",
        "--port",
        "0",
        "--db",
        join(folder, "ctxkit.db"),
        "--keys",
        keys,
        "--upstream",
        upstreamUrl,
      ],
      env,
      "history-cpu",
    );
    try {
      const turn = async (session: string, index: number) => {
        const response = await fetch(`${served.url}/v1/chat/completions`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            authorization: `Bearer ${added.stdout.trim()}`,
            "x-ctxkit-session": session,
          },
          body: JSON.stringify({
            model: "gpt-4.1-mini",
            messages: [
              {
                role: "user",
                content: `Turn ${index}: please look at src/module-${index}.ts and tell me what changed since the last commit.`,
              },
            ],
          }),
        });
        if (response.status !== 200) throw new Error(`history-cpu: turn ${index}: ${await response.text()}`);
        await response.arrayBuffer();
      };
      const turns = async (from: number, to: number, prefix = "history") => {
        await Promise.all(
          Array.from({ length: SESSIONS }, async (_, session) => {
            for (let index = from; index < to; index++) await turn(`${prefix}-${session}`, index);
          }),
        );
      };
      const window = async (from: number, to: number) => {
        const before = processCpuMs(served.pid);
        const begun = monotonicMicros();
        await turns(from, to);
        if (keep)
          process.stderr.write(`profile window of turns ${from}–${to}: ${begun} ${monotonicMicros()}\n`);
        return (processCpuMs(served.pid) - before) / ((to - from) * SESSIONS);
      };
      // Warm-up (not counted): other sessions, so the figures are a warm server's.
      await turns(0, SHORT.to, "warm");
      await turns(0, SHORT.from);
      const short = await window(SHORT.from, SHORT.to);
      await turns(SHORT.to, LONG.from);
      const long = await window(LONG.from, LONG.to);
      return { short, long };
    } finally {
      await served.stop();
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

const upstream = await startFakeOpenAIServer({
  responses: (request) => ({
    // About the size of an average message of the tau-bench conversations (~0.8 kB of JSON).
    text: `Answer ${request.index}: the module changed in two places. ${REPLY}`,
    usage: { promptTokens: 100, completionTokens: 30 },
  }),
});
try {
  const checkouts = [repo, ...process.argv.slice(2).map((path) => resolve(path))];
  for (const checkout of checkouts) {
    const { short, long } = await measure(checkout, upstream.url);
    process.stdout.write(
      `${checkout}: CPU ms per turn, history ${SHORT.from * 2}–${SHORT.to * 2} messages: ${short.toFixed(2)}; ` +
        `${LONG.from * 2}–${LONG.to * 2} messages: ${long.toFixed(2)}\n`,
    );
  }
} finally {
  await upstream.close();
}
