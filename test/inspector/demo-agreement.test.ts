// Issue 36: the demo sends you to the inspector, which must show the same session with the same figures; so must
// `ctxkit replay --session`. The session records the governance it ran with, and all three replay it with that.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.ts";
import { readGovernanceRecord } from "../../src/engine/governance-record.ts";
import { startServer, type RunningServer } from "../../src/server/start-server.ts";
import { openSqliteSessionStore, type SqliteSessionStore } from "../../src/store/sqlite/index.ts";

const WINDOW = 48_000;
let folder: string;
let story: string;
let sessionId: string;
let store: SqliteSessionStore;
let server: RunningServer;

async function cli(argv: readonly string[]): Promise<string> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, {
    stdout: { write: (chunk: string) => out.push(chunk) !== 0 } as never,
    stderr: { write: (chunk: string) => err.push(chunk) !== 0 } as never,
    env: { HOME: folder, XDG_CONFIG_HOME: join(folder, "config") },
  });
  expect(err.join("")).toBe("");
  expect(code).toBe(0);
  return out.join("");
}

const figure = (pattern: RegExp) => Number(pattern.exec(story)?.[1]?.replaceAll(",", ""));

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "ctxkit-demo-agreement-"));
  const database = join(folder, "demo.db");
  story = await cli(["demo", "--db", database, "--window", String(WINDOW)]);
  sessionId = / as (ses_\w+)\./.exec(story)![1]!;
  store = await openSqliteSessionStore({ path: database });
  // As `ctxkit serve --no-auth` runs it: its own model's (much larger) window, the demo's session unowned.
  server = await startServer({ store, port: 0, auth: false, unownedSessionsTenant: "local", webRoot: false });
}, 120_000);

afterAll(async () => {
  await server?.close();
  await store?.close();
  await rm(folder, { recursive: true, force: true });
});

describe("the demo, the inspector and `ctxkit replay --session` on the demo's session", () => {
  it("the session records the governance it ran with", async () => {
    const record = readGovernanceRecord((await store.getSession(sessionId))!.metadata);
    expect(record).toMatchObject({ model: "claude-sonnet-4-5", contextWindow: WINDOW });
    expect(record!.reservedOutputTokens).toBeGreaterThan(0);
  });

  it("agree figure for figure: window, compactions, cost units with and without ctxkit, grounding, anchors", async () => {
    const timeline = (await (await fetch(`${server.url}/v1/sessions/${sessionId}/timeline`)).json()) as {
      contextWindow: number;
      settingsFrom: string;
      totals: Record<string, number>;
      requests: { events: { type: string }[] }[];
    };
    const replay = JSON.parse(
      await cli(["replay", "--session", sessionId, "--db", join(folder, "demo.db"), "--json"]),
    ) as {
      requests: unknown[];
      totals: Record<string, number>;
    };
    const inspectorCompactions = timeline.requests
      .flatMap((request) => request.events)
      .filter((event) => event.type === "compaction-end").length;
    const demo = {
      window: figure(/a ([\d,]+)-token window/),
      requests: figure(/(\d+) model requests/),
      compactions: figure(/What governance did: (\d+) compactions/),
      raw: figure(/ without ctxkit {2}([\d,]+)\n/),
      governed: figure(/ with ctxkit {5}([\d,]+) {2}\(/),
      grounding: figure(/with ([\d.]+)% of what each reply used still in view/),
      anchors: figure(/edit anchors ([\d.]+)%\)/),
    };
    expect(timeline.settingsFrom).toBe("session");
    expect(demo.window).toBe(WINDOW);
    expect(timeline.contextWindow).toBe(WINDOW);
    expect(demo.requests).toBe(timeline.requests.length);
    expect(replay.requests).toHaveLength(timeline.requests.length);
    expect(demo.compactions).toBeGreaterThan(0);
    expect(inspectorCompactions).toBe(demo.compactions);
    expect(replay.totals["compactions"]).toBe(demo.compactions);
    for (const totals of [timeline.totals, replay.totals]) {
      expect(Math.round(totals["rawCostUnits"]!)).toBe(demo.raw);
      expect(Math.round(totals["costWithRereads"]!)).toBe(demo.governed);
      expect((totals["grounding"]! * 100).toFixed(1)).toBe(demo.grounding.toFixed(1));
      expect((totals["anchorsKept"]! * 100).toFixed(1)).toBe(demo.anchors.toFixed(1));
    }
    expect(demo.governed).toBeLessThan(demo.raw);
  });
});
