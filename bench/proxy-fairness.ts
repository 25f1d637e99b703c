// Fairness of one `ctxkit serve` between tenants, a section of the proxy-load bench: (1) one tenant sends
// maximum-size bodies without pause while another sends small turns — the small turns' p50 with and without the
// flood; (2) clients that ask for a long streamed reply and never read it — the server's memory growth per such
// client against the reply's size. Run alone (niced) with: CTXKIT_BENCH_ONLY=fairness npm run bench -- proxy-load
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:http";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { MAX_UNREAD_BYTES } from "../src/server/http/guard-streams.ts";
import { DEFAULT_LIMITS } from "../src/server/server-options.ts";
import { startFakeOpenAIServer } from "../src/test/fake-openai-server.ts";
import { startListening, type ListeningProcess } from "./support/listening-process.ts";

const repo = fileURLToPath(new URL("..", import.meta.url));
const node = process.execPath;
const UPSTREAM_MS = 20;
/** Small turns of the light tenant per run (its p50 is reported). */
const LIGHT_TURNS = 30;
/** Heavy requests kept in flight at once by the flooding tenant. */
const HEAVY_IN_FLIGHT = 2;
/** Clients that never read their stream, and the reply each asks for (two sizes: the memory must not follow it). */
const SLOW_RUNS = [
  { readers: 8, replyCharacters: 16 * 1024 * 1024 },
  { readers: 4, replyCharacters: 64 * 1024 * 1024 },
] as const;

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/** Resident memory of a process in MiB (Linux `/proc`). */
function rssMiB(pid: number): number {
  const line = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return Number(line) / 1024;
}

/** CPU milliseconds a process has used so far (every thread). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** Base64 of pseudo-random bytes: the text a tokenizer finds most work in (short pre-tokens, few repeats). */
function base64(length: number, seed: number): string {
  const bytes = Buffer.alloc(Math.ceil((length * 3) / 4));
  let state = seed;
  for (let index = 0; index < bytes.length; index++) {
    state = (state * 1_103_515_245 + 12_345) & 0x7fffffff;
    bytes[index] = state >>> 16;
  }
  return bytes.toString("base64").slice(0, length);
}

/** A chat body of exactly the server's default body limit. */
function heavyBody(seed: number): string {
  const empty = JSON.stringify({ model: "m", messages: [{ role: "user", content: "" }] });
  return JSON.stringify({
    model: "m",
    messages: [{ role: "user", content: base64(DEFAULT_LIMITS.maxBodyBytes - empty.length, seed) }],
  });
}

/** A running `ctxkit serve` with one API key per tenant. */
type Serve = ListeningProcess & { readonly keys: Record<string, string> };

async function startServe(folder: string, upstreamUrl: string, tenants: readonly string[]): Promise<Serve> {
  mkdirSync(folder, { recursive: true });
  const bin = join(repo, "bin", "ctxkit.js");
  const env = { PATH: process.env["PATH"], HOME: folder, CTXKIT_UPSTREAM_API_KEY: "bench" };
  const keyFile = join(folder, "keys.json");
  const keys: Record<string, string> = {};
  for (const tenant of tenants) {
    const added = spawnSync(node, [bin, "serve", "keys", "add", tenant, "--keys", keyFile], {
      env,
      encoding: "utf8",
    });
    if (added.status !== 0) throw new Error(`fairness: keys add failed: ${added.stderr}`);
    keys[tenant] = added.stdout.trim();
  }
  const args = [bin, "serve", "--port", "0", "--db", join(folder, "ctxkit.db"), "--keys", keyFile];
  const served = await startListening(
    [...args, "--upstream", upstreamUrl, "--rate-limit", "off"],
    env,
    "fairness",
  );
  return { ...served, keys };
}

async function post(serve: Serve, tenant: string, body: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${serve.url}/v1/chat/completions`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${serve.keys[tenant]}`,
      "content-type": "application/json",
      ...headers,
    },
    body,
  });
  await response.arrayBuffer();
  return response.status;
}

/** The light tenant's small turns, one after the other: their latencies in ms, sorted. */
async function lightTurns(serve: Serve, session: string): Promise<number[]> {
  const latencies: number[] = [];
  for (let turn = 0; turn < LIGHT_TURNS; turn++) {
    const body = JSON.stringify({
      model: "m",
      messages: [{ role: "user", content: `turn ${turn}: what changed?` }],
    });
    const started = performance.now();
    const status = await post(serve, "light", body, { "x-ctxkit-session": session });
    if (status !== 200) throw new Error(`fairness: a light turn answered ${status}`);
    latencies.push(performance.now() - started);
  }
  return latencies.sort((a, b) => a - b);
}

/** Streams `readers` long replies to clients that never read them; returns the RSS growth in MiB. */
async function slowReaders(
  serve: Serve,
  readers: number,
  replyCharacters: number,
): Promise<{ growthMiB: number; dropped: number }> {
  const before = rssMiB(serve.pid);
  let dropped = 0;
  const sockets: { destroy(): void }[] = [];
  await Promise.all(
    Array.from(
      { length: readers },
      (_, index) =>
        new Promise<void>((resolve, reject) => {
          const outgoing = request(
            `${serve.url}/v1/chat/completions`,
            {
              method: "POST",
              headers: {
                authorization: `Bearer ${serve.keys["light"]}`,
                "content-type": "application/json",
                "x-ctxkit-session": `slow-${index}`,
              },
            },
            (response) => {
              response.pause();
              sockets.push(response.socket);
              resolve();
            },
          );
          outgoing.once("error", reject);
          outgoing.end(
            JSON.stringify({
              model: "m",
              stream: true,
              messages: [{ role: "user", content: `long ${replyCharacters}` }],
            }),
          );
        }),
    ),
  );
  // Let the server read the upstream's replies and fill what it holds for the clients.
  let peak = before;
  for (let waited = 0; waited < 8_000; waited += 250) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    peak = Math.max(peak, rssMiB(serve.pid));
  }
  // A session's next turn is answered once its slow stream was dropped (the lease is free again).
  for (let index = 0; index < readers; index++) {
    const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: "short" }] });
    if ((await post(serve, "light", body, { "x-ctxkit-session": `slow-${index}` })) === 200) dropped++;
  }
  for (const socket of sockets) socket.destroy();
  return { growthMiB: peak - before, dropped };
}

/** The fairness section of the proxy-load bench, as markdown. */
export async function fairnessSection(): Promise<string> {
  const upstream = await startFakeOpenAIServer({
    responses: async (call) => {
      await new Promise((resolve) => setTimeout(resolve, UPSTREAM_MS));
      const asked = /long (\d+)/.exec(JSON.stringify(call.body.messages?.at(-1)?.content ?? ""))?.[1];
      return call.body.stream === true && asked !== undefined
        ? { text: "x".repeat(Number(asked)), chunkSize: 4_096 }
        : { text: "ok" };
    },
  });
  const folder = mkdtempSync(join(tmpdir(), "ctxkit-bench-fairness-"));
  const serve = await startServe(folder, upstream.url, ["heavy", "light"]);
  try {
    await lightTurns(serve, "warm-up");
    const alone = await lightTurns(serve, "alone");
    let flooding = true;
    let heavyDone = 0;
    const heavyStatuses = new Map<number, number>();
    const cpuBefore = cpuMs(serve.pid);
    const flood = Promise.all(
      Array.from({ length: HEAVY_IN_FLIGHT }, async (_, lane) => {
        for (let index = 0; flooding; index++) {
          const status = await post(serve, "heavy", heavyBody(lane * 1_000 + index), {
            "x-ctxkit-mode": "stateless",
          });
          heavyStatuses.set(status, (heavyStatuses.get(status) ?? 0) + 1);
          heavyDone++;
        }
      }),
    );
    // The flood starts first: the light turns run while heavy requests are being read and counted.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const flooded = await lightTurns(serve, "flooded");
    flooding = false;
    await flood;
    const heavyCpu = (cpuMs(serve.pid) - cpuBefore) / Math.max(1, heavyDone);
    // Each on a fresh server: the flood's garbage would hide the readers' memory.
    const slowRows: string[] = [];
    for (const { readers, replyCharacters } of SLOW_RUNS) {
      const fresh = await startServe(join(folder, `slow-${readers}`), upstream.url, ["light"]);
      try {
        const slow = await slowReaders(fresh, readers, replyCharacters);
        const replyMiB = replyCharacters / 2 ** 20;
        const perReader = slow.growthMiB / readers;
        slowRows.push(
          `| ${readers} clients never reading a reply of ${replyMiB} Mi characters | ${perReader.toFixed(1)} | ` +
            `**${(perReader / replyMiB).toFixed(2)}** | ${slow.dropped} of ${readers} |`,
        );
      } finally {
        await fresh.stop();
      }
    }
    const ratio = percentile(flooded, 50) / percentile(alone, 50);
    const statuses = [...heavyStatuses].map(([status, count]) => `${count} × ${status}`).join(", ");
    return [
      "### Fairness between tenants",
      "",
      `One \`ctxkit serve\` (SQLite, API keys, rate limit off) over an upstream answering in ${UPSTREAM_MS} ms, on ` +
        `${availableParallelism()} cores. Tenant *heavy* keeps ${HEAVY_IN_FLIGHT} stateless requests of the maximum ` +
        `body size (${DEFAULT_LIMITS.maxBodyBytes / 2 ** 20} MiB of base64 text, the tokenizer's worst case) in flight ` +
        `without pause; tenant *light* sends ${LIGHT_TURNS} small stateful turns one after the other, first alone, then ` +
        "during the flood. Then, on fresh servers, clients ask for a long streamed reply and never read it.",
      "",
      "| measure | value |",
      "| ---- | ---: |",
      `| light p50 alone, ms | ${percentile(alone, 50).toFixed(1)} |`,
      `| light p50 during the flood, ms | ${percentile(flooded, 50).toFixed(1)} |`,
      `| **light p50 during / alone** (goal ≤ 2) | **${ratio.toFixed(2)}** |`,
      `| heavy requests answered during the run | ${heavyDone} (${statuses}) |`,
      `| server CPU per heavy request, ms | ${heavyCpu.toFixed(0)} |`,
      "",
      `| slow readers (the unread bound is ${MAX_UNREAD_BYTES / 2 ** 20} MiB per stream) | server memory growth per reader, MiB | growth / reply size | dropped, their session free again |`,
      "| ---- | ---: | ---: | ---: |",
      ...slowRows,
      "",
      "Memory growth is the server's peak resident size over its size before: the unread bytes held, the reply " +
        "read until the drop (a reply is kept whole until stored) and garbage not yet collected; it does not grow " +
        "with the reply once the client is dropped.",
    ].join("\n");
  } finally {
    await serve.stop();
    await upstream.close();
    rmSync(folder, { recursive: true, force: true });
  }
}
