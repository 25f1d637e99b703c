import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { join } from "node:path";
import OpenAI from "openai";
import { startFakeOpenAIServer } from "../src/test/fake-openai-server.ts";
import { startListening } from "./support/listening-process.ts";
const folder = mkdtempSync("/tmp/growth-");
const upstream = await startFakeOpenAIServer({ responses: (r) => ({ text: `Answer ${r.index}: module changed in two places.`, usage: { promptTokens: 100, completionTokens: 10 } }) });
const env = { PATH: process.env["PATH"], HOME: folder, CTXKIT_UPSTREAM_API_KEY: "bench" };
const keys = join(folder, "keys.json");
const key = spawnSync(process.execPath, ["bin/ctxkit.js", "serve", "keys", "add", "bench", "--keys", keys], { env, encoding: "utf8" }).stdout.trim();
const served = await startListening(["bin/ctxkit.js", "serve", "--port", "0", "--db", join(folder, "c.db"), "--keys", keys, "--upstream", upstream.url, "--rate-limit", "off"], env, "x");
const cpu = () => { const f = readFileSync(`/proc/${served.pid}/stat`, "utf8").split(") ")[1]!.split(" "); return (Number(f[11]) + Number(f[12])) * 10; };
const clients = Array.from({ length: 10 }, (_, s) => new OpenAI({ baseURL: `${served.url}/v1`, apiKey: key, defaultHeaders: { "x-ctxkit-session": `g${s}` } }));
const N = Number(process.argv[2] ?? 400);
let before = cpu(), t0 = performance.now();
for (let t = 0; t < N; t++) {
  await Promise.all(clients.map((c, s) => c.chat.completions.create({ model: "gpt-4.1-mini", messages: [{ role: "user", content: `Session ${s}, turn ${t}: please look at src/module-${t}.ts and tell me what changed.` }] })));
  if ((t + 1) % 50 === 0) { const now = cpu(); console.log(`turns ${t - 48}-${t + 1} (history ${2 * t} msgs): ${((now - before) / 500).toFixed(2)} ms CPU/turn, ${((performance.now() - t0) / 500).toFixed(1)} ms wall/turn`); before = now; t0 = performance.now(); }
}
await served.stop(); await upstream.close();
