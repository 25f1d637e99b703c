import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildInspector } from "../../web/build.ts";
import { importTranscriptFile } from "../../src/formats/transcripts/index.ts";
import { MemoryKeyStore } from "../../src/server/auth/memory-key-store.ts";
import { startServer, type RunningServer } from "../../src/server/start-server.ts";
import { MemorySessionStore } from "../../src/store/memory/index.ts";
import { conversationDump } from "../../src/store/jsonl/conversation-dump.ts";
import { DEFAULT_PRICES } from "../../src/pricing/model-prices.ts";
import { startFakeOpenAIServer, type FakeOpenAIServer } from "../../src/test/fake-openai-server.ts";
import { FakeSummarizer } from "../../src/test/fake-summarizer.ts";
import { FakeTokenCounter } from "../../src/test/fake-token-counter.ts";
import { chromiumForTests } from "../support/chromium.ts";
import { transcriptFiles } from "../support/transcripts.ts";
import { ANCHOR_LINE, writeMissingSpanTranscript } from "./missing-span-fixture.ts";
import { preset } from "../../src/governance/presets.ts";

// Issue 8, web inspector: load the inspector in Debian's Chromium against the real server on 127.0.0.1, open
// sessions (an imported real transcript, a session governed by the engine through the proxy, a transcript
// carrying script payloads), see the chart, open payloads, and prove the payloads never run.

const ARTIFACTS = join(import.meta.dirname, "../../test-artifacts/inspector");
const TENANT = "acme";
const IMPORTED = transcriptFiles.find((file) => file.includes("codemie-code/claude-code/"));
const HOSTILE_PROMPT =
  `Look at this page: <script>window.__pwned = "script"</script> and ` +
  `<img src=x onerror="window.__pwned = 'img'"> \u001b[31mred\u001b[0m`;
/** Control characters past the 4,000-character preview of a long text. */
const LATE_CONTROLS = "\u001b[32mlate\u0007bell";

let directory: string;
let server: RunningServer;
let upstream: FakeOpenAIServer;
let browser: Browser;
let key: string;
let importedId: string;
let hostileId: string;
let burrowId: string;
const governedId = "engine-governed";

interface Timeline {
  usable: number;
  requests: {
    index: number;
    governed: { total: number };
    events: { type: string }[];
    grounding?: {
      score?: number;
      missing: { kind: string; text: string; source: { id: string; seq: number } }[];
    };
  }[];
}

async function api<T>(path: string): Promise<T> {
  const response = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  expect(response.status, path).toBe(200);
  return (await response.json()) as T;
}

async function importFile(store: MemorySessionStore, file: string): Promise<string> {
  const [conversation] = await importTranscriptFile(file);
  const dump = conversationDump(conversation!, { now: new Date().toISOString(), prices: DEFAULT_PRICES });
  await store.restoreSession({ ...dump, session: { ...dump.session, owner: TENANT } });
  return conversation!.id;
}

async function openPage(): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`);
  });
  (page as Page & { problems: string[] }).problems = problems;
  await page.goto(server.url);
  await page.locator("input[type=password]").fill(key);
  await page.getByRole("button", { name: "Use this key" }).click();
  await page.locator("table.sessions tr.session-row").first().waitFor();
  return page;
}

function problemsOf(page: Page): string[] {
  return (page as Page & { problems: string[] }).problems;
}

async function openSession(page: Page, id: string): Promise<void> {
  await page.locator(`tr[data-session="${id}"] a.session-link`).click();
  await page.locator("svg.chart").waitFor();
}

async function selectRequest(page: Page, index: number): Promise<void> {
  await page.locator(`svg.chart g.request[data-index="${index}"] rect.hit`).click();
  await page.getByRole("heading", { name: new RegExp(`^Request ${index + 1} — `) }).waitFor();
  await page.locator(".payload .messages article.message").first().waitFor();
}

beforeAll(async () => {
  expect(IMPORTED, "the codemie Claude Code transcript is in ../shared/data/transcripts").toBeDefined();
  directory = await mkdtemp(join(tmpdir(), "ctxkit-inspector-"));
  await mkdir(ARTIFACTS, { recursive: true });
  const webRoot = join(directory, "web");
  buildInspector(webRoot);

  const store = new MemorySessionStore();
  importedId = await importFile(store, IMPORTED!);
  const hostileFile = join(directory, "hostile.json");
  await writeFile(
    hostileFile,
    JSON.stringify([
      { role: "user", content: `${HOSTILE_PROMPT} ${"filler ".repeat(700)}${LATE_CONTROLS}` },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "fetch", arguments: '{"url":"x"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: `<img src=x onerror="window.__pwned = 'tool'">` },
      { role: "assistant", content: `<script>window.__pwned = "reply"</script>Done.` },
    ]),
  );
  hostileId = await importFile(store, hostileFile);
  const burrowFile = join(directory, "burrow.json");
  await writeMissingSpanTranscript(burrowFile);
  burrowId = await importFile(store, burrowFile);

  upstream = await startFakeOpenAIServer({ responses: () => "Noted." });
  const keys = new MemoryKeyStore();
  key = (await keys.create(TENANT)).key;
  server = await startServer({
    store,
    keys,
    port: 0,
    upstream: { baseURL: upstream.url, apiKey: "sk-upstream", model: "fake-model" },
    engine: {
      contextWindow: 16_000,
      maxOutputTokens: 2_000,
      tokenCounter: new FakeTokenCounter(),
      summarizer: new FakeSummarizer(),
      // The imported session fits its model's 200k window: compacting at a quarter of it gives the chart
      // compactions to show (the inspector replays with the server's policy).
      pipeline: preset("default", { compactionTrigger: 0.25 }),
    },
    limits: { rateLimit: false },
    webRoot,
  });
  // A session governed by the engine through the proxy: each request adds ~3,000 tokens to a 16k window.
  for (let request = 0; request < 10; request++) {
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        "x-ctxkit-session": governedId,
      },
      body: JSON.stringify({
        model: "fake-model",
        messages: [
          {
            role: "user",
            content: `Step ${request} of the quokka build: ${"notes on the build ".repeat(650)}`,
          },
        ],
      }),
    });
    expect(response.status).toBe(200);
    await response.text();
  }
  browser = await chromium.launch(chromiumForTests());
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await upstream?.close();
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
});

describe("web inspector in Chromium", () => {
  it("asks for the API key, then lists the sessions with owner, tokens and cost", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(server.url);
    await page.getByRole("heading", { name: "API key" }).waitFor();
    await page.locator("input[type=password]").fill("ctxk_wrong_key");
    await page.getByRole("button", { name: "Use this key" }).click();
    await page.getByText("The server refused this key").waitFor();
    await page.locator("input[type=password]").fill(key);
    await page.getByRole("button", { name: "Use this key" }).click();
    await page.locator("table.sessions tr.session-row").first().waitFor();
    const ids = await page
      .locator("tr.session-row")
      .evaluateAll((rows) => rows.map((row) => row.getAttribute("data-session")));
    expect(ids).toEqual(expect.arrayContaining([importedId, hostileId, burrowId, governedId]));
    const governedRow = page.locator(`tr[data-session="${governedId}"]`);
    expect(await governedRow.locator("td").nth(1).textContent()).toBe(TENANT);
    expect(await page.evaluate(() => sessionStorage.getItem("ctxkit.apiKey"))).toBe(key);
    await page.screenshot({ path: join(ARTIFACTS, "sessions.png"), fullPage: true });

    await page.locator("input.search").fill("quokka");
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByRole("heading", { name: "Sessions matching “quokka”" }).waitFor();
    // The heading is drawn before the search answers: wait for the hit itself.
    await page.locator(`tr.session-row[data-session="${governedId}"]`).waitFor();
    expect(await page.locator("tr.session-row").count()).toBe(1);
    expect(await page.locator("tr.session-row").getAttribute("data-session")).toBe(governedId);
    await page.close();
  });

  it("shows an imported transcript's per-request chart with compactions, a payload with its summary, and an offloaded output", async () => {
    const timeline = await api<Timeline>(`/v1/sessions/${encodeURIComponent(importedId)}/timeline`);
    const compacted = timeline.requests.find((request) =>
      request.events.some((event) => event.type === "compaction-end"),
    );
    const offloaded = timeline.requests.find((request) =>
      request.events.some((event) => event.type === "tool-output-offloaded"),
    );
    expect(compacted).toBeDefined();
    expect(offloaded).toBeDefined();

    const page = await openPage();
    await openSession(page, importedId);
    expect(await page.locator("svg.chart g.request").count()).toBe(timeline.requests.length);
    expect(await page.locator("svg.chart .seg.ch-history").count()).toBeGreaterThan(0);
    expect(await page.locator("svg.chart .mark.ev-compaction").count()).toBeGreaterThan(0);
    expect(await page.locator("svg.chart .mark.ev-offload").count()).toBeGreaterThan(0);
    expect(await page.locator("svg.chart polyline.cached").count()).toBe(1);
    // The y-axis ends at a round number just above the largest governed request, not at the window.
    const largest = Math.max(...timeline.requests.map((request) => request.governed.total));
    const yMax = Number(await page.locator("svg.chart").getAttribute("data-y-max"));
    expect(yMax).toBeGreaterThanOrEqual(largest);
    expect(yMax).toBeLessThan(largest * 1.5);
    if (timeline.usable > yMax) {
      expect(await page.locator("svg.chart line.window").count()).toBe(0);
      expect(await page.locator("svg.chart .window-label.off-scale").textContent()).toMatch(
        /above this axis/,
      );
    }
    // Grounding per request: a bar under each request, a column of the requests table.
    expect(await page.locator("svg.chart rect.grounding").count()).toBe(timeline.requests.length);
    expect(await page.locator("table.requests thead th").allTextContents()).toContain("Grounding");
    const cells = await page.locator("table.requests td.grounding").allTextContents();
    expect(cells).toHaveLength(timeline.requests.length);
    timeline.requests.forEach((request, row) => {
      const score = request.grounding?.score;
      if (score !== undefined) expect(cells[row]).toMatch(new RegExp(`^${Math.round(score * 100)}% \\(`));
    });
    await page.locator("svg.chart").screenshot({ path: join(ARTIFACTS, "chart.png") });

    await selectRequest(page, compacted!.index);
    await page.getByRole("heading", { name: "Summary in this payload" }).waitFor();
    expect((await page.locator(".summary-text").first().textContent())!.length).toBeGreaterThan(50);
    expect(await page.locator(".request-events li.ev-compaction").count()).toBeGreaterThan(0);
    // The viewport around what was checked: a full-page shot of a long transcript is ~44,000 px tall and took over
    // 30 s on a loaded CI machine.
    await page.locator(".summary-text").first().scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(ARTIFACTS, "imported-compaction.png") });

    await selectRequest(page, offloaded!.index);
    const open = page.locator("button.open-offloaded").first();
    await open.waitFor();
    await open.click();
    const text = page.locator("pre.offloaded-text").first();
    await text.waitFor();
    expect((await text.textContent())!.length).toBeGreaterThan(100);
    await text.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(ARTIFACTS, "imported-offloaded.png") });
    expect(problemsOf(page)).toEqual([]);
    await page.close();
  });

  it("shows a session governed by the engine: its stored summaries and its current context", async () => {
    const page = await openPage();
    const asked: string[] = [];
    page.on("request", (request) => asked.push(request.url()));
    await openSession(page, governedId);
    await page.getByRole("heading", { name: /^Summaries stored in the session \(\d+\)$/ }).waitFor();
    // A short session fills the chart, and every label of the chart is inside it (none cut at its left edge).
    const chart = page.locator("svg.chart");
    expect(await chart.locator("g.request").count()).toBeLessThan(20);
    expect(Number(await chart.getAttribute("width"))).toBeGreaterThanOrEqual(900);
    const lefts = await chart
      .locator("text")
      .evaluateAll((texts) => texts.map((text) => (text as SVGTextElement).getBBox().x));
    expect(lefts.length).toBeGreaterThan(0);
    expect(Math.min(...lefts)).toBeGreaterThanOrEqual(0);
    // The summaries alone: opening a session never downloads its whole stored history.
    const messages = asked.filter((url) => url.includes("/messages"));
    expect(messages).toEqual([`${server.url}/v1/sessions/${governedId}/messages?strategy=summaries`]);
    await page.getByRole("button", { name: "Show the current context" }).click();
    await page.getByRole("heading", { name: /^Current context/ }).waitFor();
    await page.locator(".context-panel .payload article.message").first().waitFor();
    await page
      .getByRole("heading", { name: "Payload of the last request sent (governed messages)" })
      .waitFor();
    expect(await page.locator(".context-panel article.message.summary").count()).toBeGreaterThan(0);
    await page.screenshot({ path: join(ARTIFACTS, "engine-governed.png"), fullPage: true });
    expect(problemsOf(page)).toEqual([]);
    await page.close();
  });

  it("lists the spans a request's view lacked and highlights the payload message that held them", async () => {
    const timeline = await api<Timeline>(`/v1/sessions/${encodeURIComponent(burrowId)}/timeline`);
    const edit = timeline.requests.find((request) =>
      request.grounding?.missing.some((span) => span.kind === "anchor"),
    )!;
    expect(edit).toBeDefined();
    const source = edit.grounding!.missing.find((span) => span.kind === "anchor")!.source;

    const page = await openPage();
    await openSession(page, burrowId);
    await page.locator(`table.requests tr.request-row[data-index="${edit.index}"]`).click();
    await page.getByRole("heading", { name: new RegExp(`^Request ${edit.index + 1} — `) }).waitFor();
    await page.locator(".payload .messages article.message").first().waitFor();
    expect(await page.locator("h3.grounding-heading").textContent()).toMatch(/edit anchors 0 of 1/);
    const anchor = page.locator(".missing-spans li.missing-span", { hasText: "anchor" }).first();
    expect(await anchor.locator("code.span-text").textContent()).toBe(ANCHOR_LINE);
    expect(await anchor.textContent()).toContain(`held by #${source.seq} tool, offloaded in this payload`);
    const holder = page.locator("article.message.holds-missing");
    expect(await holder.count()).toBe(1);
    expect(await holder.getAttribute("data-message-id")).toBe(source.id);
    expect(await holder.locator(".missing-note").textContent()).toContain(ANCHOR_LINE);
    await anchor.getByRole("button", { name: `#${source.seq} tool` }).click();
    await holder.locator(".missing-note").waitFor({ state: "visible" });
    await page.screenshot({ path: join(ARTIFACTS, "missing-span.png") });
    expect(problemsOf(page)).toEqual([]);
    await page.close();
  });

  it("renders <script> and <img onerror> payloads as text: nothing runs", async () => {
    const page = await openPage();
    const title = await page.locator(`tr[data-session="${hostileId}"] a.session-link`).textContent();
    expect(title).toContain("<script>");
    await openSession(page, hostileId);
    await selectRequest(page, 1);
    const shown = await page.locator(".payload .messages").textContent();
    expect(shown).toContain(`<script>window.__pwned = "script"</script>`);
    expect(shown).toContain(`<img src=x onerror="window.__pwned = 'tool'">`);
    expect(shown).toContain("␛[31mred");
    // "Show all" shows the rest of a long text with its control characters made visible too.
    const prompt = page.locator(".payload .messages article.message.role-user").first();
    await prompt.getByRole("button", { name: /^Show all [\d,]+ characters$/ }).click();
    const whole = await prompt.locator("pre").first().textContent();
    expect(whole).toContain("␛[32mlate\\u0007bell");
    expect(whole).not.toContain("\u001b");
    expect(whole).not.toContain("\u0007");
    // The request's payload is a replay, and says so.
    await page.getByRole("heading", { name: "Replayed payload" }).waitFor();
    expect(await page.locator(".payload-note").textContent()).toContain(
      "not a recording of the request sent",
    );
    expect(await page.getByText("Exact payload").count()).toBe(0);
    await page.getByText("OpenAI chat JSON (of this replay)").click();
    expect(await page.locator("details.openai pre").textContent()).toContain("onerror");
    await page.screenshot({ path: join(ARTIFACTS, "hostile.png"), fullPage: true });
    expect(await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned)).toBeUndefined();
    expect(await page.locator("main img").count()).toBe(0);
    expect(await page.locator("main script").count()).toBe(0);

    // A span the reply used, with markup in it, shown in the missing-span list and the payload's note.
    await page.goto(`${server.url}/#/`);
    await page.locator("table.sessions tr.session-row").first().waitFor();
    await openSession(page, burrowId);
    await page.locator("table.requests tr.request-row.missing-row").first().click();
    await page.locator(".missing-spans li.missing-span").first().waitFor();
    expect(await page.locator(".missing-spans").textContent()).toContain(
      `<svg onload=window.__pwned='span'>`,
    );
    expect(await page.locator(".missing-note").first().textContent()).toContain("<svg onload=");
    expect(await page.locator("main svg:not(.chart)").count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned)).toBeUndefined();
    expect(problemsOf(page)).toEqual([]);
    await page.close();
  });

  it("serves the inspector with the strict Content-Security-Policy", async () => {
    const response = await fetch(`${server.url}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(await response.text()).not.toMatch(/<script>|style=/);
  });
});
