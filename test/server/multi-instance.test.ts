// Three `ctxkit serve` processes on one PostgreSQL (the one the test run starts), clients spread over them, the same
// sessions hit by different instances at once; then one instance SIGKILLed mid-load. Every acknowledged turn is
// stored whole and in order (racing turns of a session take turns across the instances): never refused, never lost,
// never interleaved, never a 500.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { messageText } from "../../src/model/blocks.ts";
import { openPostgresSessionStore } from "../../src/store/postgres/index.ts";
import { startFakeOpenAIServer, type FakeOpenAIServer } from "../../src/test/fake-openai-server.ts";
import { bundled } from "../support/bundled.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const node = join(root, "node_modules", ".bin", "node");
const bin = bundled("ctxkit");
const SESSIONS = 6;
const TURNS = 8;

let home: string;
let upstream: FakeOpenAIServer;
let databaseUrl: string;
let key: string;
const keys = () => join(home, "keys.json");

function childEnv(): NodeJS.ProcessEnv {
  return {
    PATH: process.env["PATH"],
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    NODE_COMPILE_CACHE: process.env["NODE_COMPILE_CACHE"],
  };
}

interface Instance {
  readonly url: string;
  readonly kill: (signal: NodeJS.Signals) => Promise<void>;
  readonly stderr: () => string;
}

function serve(): Promise<Instance> {
  const child = spawn(
    node,
    [bin, "serve", "--port", "0", "--pg", databaseUrl, "--keys", keys(), "--upstream", upstream.url],
    { cwd: home, env: childEnv() },
  );
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return new Promise((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const url = /listening on (http:\/\/\S+)/.exec(stdout)?.[1];
      if (url !== undefined)
        resolve({
          url,
          stderr: () => stderr,
          kill: async (signal) => {
            child.kill(signal);
            await exited;
          },
        });
    });
    void exited.then(() => reject(new Error(`serve exited: ${stderr}`)));
  });
}

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "ctxkit-multi-instance-"));
  // Answers after ~20 ms, naming the question it answers (so a history can be checked turn by turn).
  upstream = await startFakeOpenAIServer({
    responses: async (request) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      const messages = request.body.messages ?? [];
      const last = messages.at(-1);
      return { text: `re: ${typeof last?.content === "string" ? last.content : "?"}` };
    },
  });
  const admin = new pg.Client({ connectionString: process.env["CTXKIT_TEST_PG_URL"] });
  await admin.connect();
  const database = `multi_${Date.now()}_${process.pid}`;
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();
  const url = new URL(process.env["CTXKIT_TEST_PG_URL"]!);
  url.pathname = `/${database}`;
  databaseUrl = url.toString();
  const added = spawnSync(node, [bin, "serve", "keys", "add", "acme", "--keys", keys()], {
    cwd: home,
    env: childEnv(),
    encoding: "utf8",
  });
  expect(added.status, added.stderr).toBe(0);
  key = added.stdout.trim();
});

afterAll(async () => {
  await upstream.close();
  rmSync(home, { recursive: true, force: true });
});

/** One turn of `session` through `instance`; retries a conflict (409) as a client would. Returns the statuses seen. */
async function turn(instance: Instance, session: string, text: string): Promise<number[]> {
  const client = new OpenAI({
    baseURL: `${instance.url}/v1`,
    apiKey: key,
    maxRetries: 0,
    defaultHeaders: { "X-Ctxkit-Session": session },
  });
  const statuses: number[] = [];
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: text }] });
      statuses.push(200);
      return statuses;
    } catch (error) {
      const status = error instanceof OpenAI.APIError ? (error.status ?? 0) : 0;
      statuses.push(status);
      if (status !== 409) return statuses;
      await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 40));
    }
  }
  return statuses;
}

describe("three ctxkit serve instances on one PostgreSQL", () => {
  it("lose no turn and interleave no history when the same sessions hit different instances at once, even when one is killed", async () => {
    const instances = await Promise.all([serve(), serve(), serve()]);
    try {
      const statuses: number[] = [];
      // Each session's turns go round the instances, two at a time through two different instances, and the
      // sessions run at once: the same session's turns race on different instances.
      const conversation = async (session: number) => {
        let done = 0;
        for (let index = 0; index < TURNS; index++) {
          const pair = await Promise.all(
            (["a", "b"] as const).map((side, offset) =>
              turn(
                instances[(session + index + offset) % instances.length]!,
                `s${session}`,
                `s${session} turn ${index}${side}`,
              ),
            ),
          );
          for (const seen of pair) {
            statuses.push(...seen);
            if (seen.at(-1) === 200) done++;
          }
        }
        return done;
      };
      const completed = await Promise.all(
        Array.from({ length: SESSIONS }, (_, session) => conversation(session)),
      );
      // Racing turns of a session take turns across the instances (turn locks): none is refused.
      expect(statuses.filter((status) => status !== 200)).toEqual([]);
      expect(completed).toEqual(Array.from({ length: SESSIONS }, () => 2 * TURNS));
      console.log(
        `conflicts answered 409 and retried: ${statuses.filter((status) => status === 409).length}`,
      );

      // Mid-load, one instance is killed: the others go on; a turn through it fails to connect or is stored whole.
      const victim = instances[2];
      const load = Promise.all(
        Array.from({ length: SESSIONS }, async (_, session) => {
          // A turn through the instance about to be killed, in flight when it dies (the upstream takes 20 ms).
          const victimTry = turn(victim, `s${session}`, `s${session} victim turn`);
          const results: { index: number; statuses: number[] }[] = [];
          for (let index = TURNS; index < TURNS + 4; index++) {
            const instance = instances[index % 2]!;
            results.push({
              index,
              statuses: await turn(instance, `s${session}`, `s${session} turn ${index}`),
            });
          }
          return { results, victimTry: await victimTry };
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 15));
      await victim.kill("SIGKILL");
      const after = await load;
      console.log(
        `turns through the killed instance: ${after.map(({ victimTry }) => victimTry.join("/")).join(", ")}`,
      );
      // Each turn through the killed instance either finished (200) or lost its connection (0): never a 500.
      for (const { victimTry } of after) expect([0, 200]).toContain(victimTry.at(-1));
      for (const { results } of after) {
        expect(results.map((result) => result.statuses.at(-1))).toEqual([200, 200, 200, 200]);
      }
    } finally {
      await Promise.all(instances.map((instance) => instance.kill("SIGTERM")));
    }

    // The stored histories: each session's turns in order, each question followed by its own answer, nothing
    // half-written (a turn the killed instance held is stored whole or not at all).
    const store = await openPostgresSessionStore({ connectionString: databaseUrl });
    try {
      // The model was called once per stored turn, plus at most the turns the killed instance held.
      let storedTurns = 0;
      for (let session = 0; session < SESSIONS; session++)
        storedTurns += (await store.getSession(`acme/s${session}`))?.turnCount ?? 0;
      expect(upstream.requests.length).toBeGreaterThanOrEqual(storedTurns);
      expect(upstream.requests.length).toBeLessThanOrEqual(storedTurns + SESSIONS);
      for (let session = 0; session < SESSIONS; session++) {
        const messages = await store.loadMessages(`acme/s${session}`, { strategy: "all" });
        const texts = messages.map((message) => [message.role, messageText(message)]);
        for (let index = 0; index < texts.length; index += 2) {
          expect(texts[index]![0]).toBe("user");
          expect(texts[index + 1]).toEqual(["assistant", `re: ${texts[index]![1]}`]);
        }
        const questions = texts.filter(([role]) => role === "user").map(([, text]) => text);
        const numbered = questions.filter((text) => !text!.includes("victim"));
        // Both turns of a pair are there (in whichever order they won), pairs in order, then the later turns.
        for (let index = 0; index < TURNS; index++)
          expect(numbered.slice(2 * index, 2 * index + 2).sort()).toEqual([
            `s${session} turn ${index}a`,
            `s${session} turn ${index}b`,
          ]);
        expect(numbered.slice(2 * TURNS)).toEqual(
          Array.from({ length: 4 }, (_, offset) => `s${session} turn ${TURNS + offset}`),
        );
        expect(questions.filter((text) => text!.includes("victim")).length).toBeLessThanOrEqual(1);
      }
    } finally {
      await store.close();
    }
  });
});
