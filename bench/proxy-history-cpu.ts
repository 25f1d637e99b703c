// ctxkit serve's CPU per proxied turn at a short and at a long history (issue 35: per-turn work must not grow with
// the history). Not a section of `npm run bench`; run alone while working on the proxy's hot path:
//
//   npm exec -- node bench/proxy-history-cpu.ts [checkout…]
//
// A `ctxkit serve` (from source, SQLite, API keys, default limits) over a loopback upstream that answers at once;
// `SESSIONS` sessions grow side by side, one stateful turn after the other, to `LONG.to` turns. The server process's
// CPU (every thread, from `/proc`) is read around two windows of turns: early (a history of 10–60 messages) and
// late (1,000+ messages). The checkouts given (default: this one) each run their `ctxkit serve`, side by side, and
// every turn goes to each in turn: on a shared, noisy machine they then see the same load, and before/after is a
// ratio of one run (e.g. `npm exec -- node bench/proxy-history-cpu.ts ../main .`). `CTXKIT_BENCH_PROFILE_KEEP=<dir>` runs the servers under `--cpu-prof` into <dir> (and prints the
// windows' monotonic clock, the profiles' clock).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startFakeOpenAIServer } from "../src/test/fake-openai-server.ts";
import { monotonicMicros } from "./support/cpu-profile.ts";
import { startServe, type ServeProcess } from "./support/ctxkit-serve.ts";

const SESSIONS = 4;
/** Turns [from, to) of each session measured as the short history (2 messages per turn). */
const SHORT = { from: 5, to: 30 } as const;
/** Turns [from, to) of each session measured as the long history. */
const LONG = { from: 500, to: 550 } as const;
/** About the size of an average message of the tau-bench conversations (~0.8 kB of JSON). */
const REPLY =
  "The parser now keeps comments attached to the node that follows them, and the printer wraps long lines at 100 columns. ".repeat(
    5,
  );
const repo = fileURLToPath(new URL("..", import.meta.url));
const keep = process.env["CTXKIT_BENCH_PROFILE_KEEP"] || undefined;

/** CPU milliseconds a process has used so far and its minor page faults (Linux `/proc`; every thread counted). */
function processCpu(pid: number): { ms: number; faults: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return { ms: ((Number(fields[11]) + Number(fields[12])) * 1000) / 100, faults: Number(fields[7]) };
}

/** A `ctxkit serve` of `checkout`, from source, on a fresh database in `folder`. */
async function serve(checkout: string, folder: string, upstreamUrl: string) {
  const served = await startServe({
    checkout,
    folder,
    upstreamUrl,
    label: "history-cpu",
    bin: join(checkout, "src", "cli", "bin.ts"),
    ...(keep !== undefined && { nodeArgs: ["--cpu-prof", "--cpu-prof-dir", join(keep, basename(folder))] }),
  });
  return { ...served, checkout };
}

async function turn(served: ServeProcess, session: string, index: number) {
  const response = await fetch(`${served.url}/v1/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${served.key}`,
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
}

const upstream = await startFakeOpenAIServer({
  responses: (request) => ({
    text: `Answer ${request.index}: the module changed in two places. ${REPLY}`,
    usage: { promptTokens: 100, completionTokens: 30 },
  }),
});
const folders: string[] = [];
const servers: (ServeProcess & { checkout: string })[] = [];
try {
  const given = process.argv.slice(2).map((path) => resolve(path));
  for (const checkout of given.length === 0 ? [repo] : given) {
    folders.push(mkdtempSync(join(tmpdir(), "ctxkit-history-cpu-")));
    servers.push(await serve(checkout, folders.at(-1)!, upstream.url));
  }
  /** Turns [from, to) of every session, each sent to every server in turn. */
  const turns = async (from: number, to: number, prefix = "history") => {
    await Promise.all(
      Array.from({ length: SESSIONS }, async (_, session) => {
        for (let index = from; index < to; index++)
          for (const served of servers) await turn(served, `${prefix}-${session}`, index);
      }),
    );
  };
  /** CPU milliseconds and minor page faults per turn of each server over turns [from, to). */
  const window = async (from: number, to: number) => {
    const before = servers.map((served) => processCpu(served.pid));
    const begun = monotonicMicros();
    await turns(from, to);
    if (keep) process.stderr.write(`profile window of turns ${from}–${to}: ${begun} ${monotonicMicros()}\n`);
    return servers.map((served, index) => {
      const after = processCpu(served.pid);
      const turns = (to - from) * SESSIONS;
      return {
        ms: (after.ms - before[index]!.ms) / turns,
        faults: (after.faults - before[index]!.faults) / turns,
      };
    });
  };
  // Warm-up (not counted): other sessions, so the figures are a warm server's.
  await turns(0, SHORT.to, "warm");
  await turns(0, SHORT.from);
  const short = await window(SHORT.from, SHORT.to);
  await turns(SHORT.to, LONG.from);
  const long = await window(LONG.from, LONG.to);
  for (const [index, served] of servers.entries())
    process.stdout.write(
      `${served.checkout}: CPU ms per turn, history ${SHORT.from * 2}–${SHORT.to * 2} messages: ` +
        `${short[index]!.ms.toFixed(2)}; ${LONG.from * 2}–${LONG.to * 2} messages: ${long[index]!.ms.toFixed(2)} ` +
        `(minor page faults per turn: ${short[index]!.faults.toFixed(0)}; ${long[index]!.faults.toFixed(0)})\n`,
    );
} finally {
  for (const served of servers) await served.stop();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  await upstream.close();
}
