import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import fc from "fast-check";
import type { ChannelTokens } from "../../src/assembly/inspect.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importTranscriptFile } from "../../src/formats/transcripts/index.ts";
import type { Message } from "../../src/model/message.ts";
import { buildTimeline } from "../../src/server/routes/inspector-timeline.ts";
import {
  startHarness,
  type ServerHarness,
} from "../../src/server/test-support/server-harness.test-helpers.ts";
import { conversationDump } from "../../src/store/jsonl/conversation-dump.ts";
import { DEFAULT_PRICES } from "../../src/pricing/model-prices.ts";
import { createExtractiveSummarizer } from "../../src/summarize/index.ts";
import { FakeTokenCounter } from "../../src/test/fake-token-counter.ts";
import { runCli } from "../../src/cli/main.ts";
import { transcriptFiles } from "../support/transcripts.ts";
import { ANCHOR_LINE, writeMissingSpanTranscript } from "./missing-span-fixture.ts";
import { preset } from "../../src/governance/presets.ts";

type Channels = ChannelTokens;
interface MissingSpanJson {
  kind: string;
  text: string;
  source: { id: string; seq: number; role: string; fate: string; viewMessageId?: string };
}
interface TimelineRequest {
  index: number;
  replySeq: number;
  raw: Channels;
  governed: Channels;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  costUnits: number;
  rereadCostUnits: number;
  grounding?: {
    score?: number;
    spans: number;
    kept: number;
    anchors: number;
    anchorsKept: number;
    missing: MissingSpanJson[];
    missingCount: number;
  };
  events: { type: string; refs?: string[] }[];
}
interface TimelineAnswer {
  contextWindow: number;
  usable: number;
  model?: string;
  settingsFrom: string;
  cacheModel: { provider: string; model?: string };
  totals: Record<string, number>;
  requests: TimelineRequest[];
}
interface CliReplay {
  requests: { index: number; costUnits: number; grounding?: number; missing?: string[] }[];
  totals: Record<string, number>;
}

const channelSum = (channels: Channels) =>
  channels.system.reduce((sum, section) => sum + section.tokens, 0) +
  channels.summary +
  channels.history.user +
  channels.history.assistant +
  channels.toolOutputs +
  channels.currentInput;

const POLICY = { compactionTrigger: 0.25 };
const FILE = transcriptFiles.find((file) => file.includes("codemie-code/claude-code/"));
let harness: ServerHarness;
let directory: string;
let sessionId: string;
let burrowId: string;

async function store(file: string): Promise<string> {
  const [conversation] = await importTranscriptFile(file);
  const dump = conversationDump(conversation!, { now: new Date().toISOString(), prices: DEFAULT_PRICES });
  await harness.store.restoreSession({ ...dump, session: { ...dump.session, owner: "acme" } });
  return encodeURIComponent(conversation!.id);
}

async function timelineOf(id: string): Promise<TimelineAnswer> {
  return (await (await harness.call(`/v1/sessions/${id}/timeline`)).json()) as TimelineAnswer;
}

/** `ctxkit replay --json <file>`, run in this process. */
async function cliReplay(file: string): Promise<CliReplay> {
  let stdout = "";
  const sink = (write: (text: string) => void) =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        write(chunk.toString());
        done();
      },
    });
  const config = join(directory, "replay-config.json");
  await writeFile(config, JSON.stringify({ policy: POLICY }));
  const code = await runCli(["replay", "--json", "--config", config, file], {
    stdout: sink((text) => (stdout += text)),
    stderr: sink(() => {}),
    env: {},
  });
  expect(code).toBe(0);
  return JSON.parse(stdout) as CliReplay;
}

beforeAll(async () => {
  expect(FILE).toBeDefined();
  // The session fits its model's 200k window; compacting at a quarter of it makes both replays summarise, so their
  // summarizer bills are compared too.
  harness = await startHarness({ contextWindow: 16_000, pipeline: preset("default", POLICY) });
  directory = await mkdtemp(join(tmpdir(), "ctxkit-timeline-"));
  sessionId = await store(FILE!);
  const burrow = join(directory, "burrow.json");
  await writeMissingSpanTranscript(burrow);
  burrowId = await store(burrow);
});

afterAll(async () => {
  await harness?.close();
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
});

describe("inspector timeline routes", () => {
  it("report one request per replayed request with the replay route's raw tokens, channels that add up, and a cache bill within the payload", async () => {
    const timeline = await timelineOf(sessionId);
    const replay = (await (await harness.call(`/v1/sessions/${sessionId}/replay`)).json()) as {
      requests: { rawTokens: number }[];
    };
    expect(timeline.requests.length).toBe(replay.requests.length);
    expect(timeline.requests.map((request) => request.raw.total)).toEqual(
      replay.requests.map((request) => request.rawTokens),
    );
    for (const request of timeline.requests) {
      expect(channelSum(request.governed)).toBe(request.governed.total);
      expect(channelSum(request.raw)).toBe(request.raw.total);
      expect(request.governed.total).toBeLessThanOrEqual(timeline.usable);
      expect(request.cacheReadTokens + request.cacheWriteTokens).toBeLessThanOrEqual(request.governed.total);
    }
    expect(timeline.requests.some((request) => request.governed.total < request.raw.total)).toBe(true);
  });

  it("replay a session that records a model as `ctxkit replay` replays its transcript: same window, cache model, per-request cost and grounding, and totals", async () => {
    const [timeline, cli] = await Promise.all([timelineOf(sessionId), cliReplay(FILE!)]);
    expect(timeline).toMatchObject({
      model: "claude-sonnet-4-5-20250929",
      settingsFrom: "recorded model",
      contextWindow: 200_000,
      cacheModel: { provider: "anthropic", model: "claude-sonnet-4-5-20250929" },
    });
    expect(timeline.requests.map((request) => request.costUnits)).toEqual(
      cli.requests.map((request) => request.costUnits),
    );
    expect(timeline.requests.map((request) => request.grounding?.score)).toEqual(
      cli.requests.map((request) => request.grounding),
    );
    expect(timeline.requests.map((request) => request.grounding?.missing.map((span) => span.kind))).toEqual(
      cli.requests.map((request) => request.missing?.map((span) => span.slice(0, span.indexOf(":"))) ?? []),
    );
    const { totals } = timeline;
    expect(totals).toMatchObject({
      costUnits: cli.totals["costUnits"],
      rawCostUnits: cli.totals["rawCostUnits"],
      summarizerCostUnits: cli.totals["summarizerCostUnits"],
      rereadCostUnits: cli.totals["rereadCostUnits"],
      costWithRereads: cli.totals["costWithRereads"],
      cacheReadTokens: cli.totals["cachedInputTokens"],
      cacheWriteTokens: cli.totals["cacheWriteTokens"],
      grounding: cli.totals["grounding"],
      anchorsKept: cli.totals["anchorsKept"],
    });
    expect(totals["summaryCalls"]).toBeGreaterThan(0);
    expect(totals["costWithRereads"]).toBeGreaterThan(totals["costUnits"]!);
    // Every missing span names a message of the history before its request and what became of it.
    const missing = timeline.requests.flatMap((request) =>
      (request.grounding?.missing ?? []).map((span) => ({ span, replySeq: request.replySeq })),
    );
    expect(missing.length).toBeGreaterThan(0);
    for (const { span, replySeq } of missing) {
      expect(span.source.seq).toBeLessThan(replySeq);
      expect(["offloaded", "cut", "summarised", "removed"]).toContain(span.source.fate);
    }
  });

  it("list the edit anchor a view lacked, with the tool output that held it and the offloaded message standing for it in the payload", async () => {
    const timeline = await timelineOf(burrowId);
    expect(timeline).toMatchObject({ settingsFrom: "server", contextWindow: 16_000 });
    const edit = timeline.requests.find((request) =>
      request.grounding?.missing.some((span) => span.kind === "anchor"),
    )!;
    expect(edit).toBeDefined();
    const anchor = edit.grounding!.missing.find((span) => span.kind === "anchor")!;
    expect(anchor.text).toBe(ANCHOR_LINE);
    expect(anchor.source).toMatchObject({ seq: 2, role: "tool", fate: "offloaded" });
    expect(edit.grounding).toMatchObject({ anchors: 1, anchorsKept: 0 });
    expect(edit.grounding!.score).toBeLessThan(1);
    expect(edit.rereadCostUnits).toBeGreaterThan(0);
    expect(timeline.totals["anchorsKept"]).toBe(0);
    expect(timeline.totals["rereads"]).toBe(1);
    const payload = (await (
      await harness.call(`/v1/sessions/${burrowId}/timeline/${edit.index}`)
    ).json()) as { messages: Message[] };
    const standing = payload.messages.find((message) => message.id === anchor.source.viewMessageId)!;
    expect(standing.seq).toBe(2);
    expect(
      standing.content.some((block) => block.type === "tool-result" && block.offloadRef !== undefined),
    ).toBe(true);
    expect(JSON.stringify(standing.content)).not.toContain(ANCHOR_LINE);
  });

  it("serve the payload of a request and the outputs offloaded in it; unknown requests and refs are 404", async () => {
    const timeline = await timelineOf(sessionId);
    const offload = timeline.requests.find((request) =>
      request.events.some((event) => event.type === "tool-output-offloaded"),
    )!;
    expect(offload).toBeDefined();
    const payload = (await (
      await harness.call(`/v1/sessions/${sessionId}/timeline/${offload.index}`)
    ).json()) as { messages: Message[]; openai: unknown[]; request: TimelineRequest };
    expect(payload.request).toEqual(offload);
    expect(payload.openai.length).toBe(payload.messages.length);
    const refs = payload.messages.flatMap((message) =>
      message.content.flatMap((block) =>
        block.type === "tool-result" && block.offloadRef !== undefined ? [block.offloadRef] : [],
      ),
    );
    expect(refs.length).toBeGreaterThan(0);
    const answer = await harness.call(
      `/v1/sessions/${sessionId}/timeline/${offload.index}/offloaded/${encodeURIComponent(refs[0]!)}`,
    );
    expect(answer.status).toBe(200);
    const { text } = (await answer.json()) as { text: string };
    expect(text.length).toBeGreaterThan(0);
    const count = timeline.requests.length;
    expect((await harness.call(`/v1/sessions/${sessionId}/timeline/${count}`)).status).toBe(404);
    expect((await harness.call(`/v1/sessions/${sessionId}/timeline/-1`)).status).toBe(404);
    expect((await harness.call(`/v1/sessions/${sessionId}/timeline/0/offloaded/blob%3Anope`)).status).toBe(
      404,
    );
  });
});

describe("buildTimeline", () => {
  const counter = new FakeTokenCounter();
  const summarizer = createExtractiveSummarizer({ counter });
  const message = (seq: number, role: Message["role"], text: string, callId?: string): Message => ({
    id: `m${seq}`,
    sessionId: "s",
    seq,
    turn: seq,
    role,
    createdAt: new Date(seq * 1000).toISOString(),
    content:
      role === "tool"
        ? [{ type: "tool-result", callId: callId!, toolName: "read", content: text }]
        : role === "assistant" && callId !== undefined
          ? [{ type: "tool-call", id: callId, name: "read", input: { path: text.slice(0, 10) } }]
          : [{ type: "text", text }],
  });

  it("every request's channels add up, fit the window, and the cache never serves more than was sent", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ prompt: fc.nat(3_000), output: fc.nat(12_000), tools: fc.nat(3) }), {
          minLength: 1,
          maxLength: 12,
        }),
        async (turns) => {
          const messages: Message[] = [];
          for (const turn of turns) {
            messages.push(message(messages.length, "user", "u".repeat(turn.prompt + 1)));
            for (let call = 0; call < turn.tools; call++) {
              const id = `c${messages.length}`;
              messages.push(message(messages.length, "assistant", "call", id));
              messages.push(message(messages.length, "tool", "o".repeat(turn.output), id));
            }
            messages.push(message(messages.length, "assistant", "done"));
          }
          const timeline = await buildTimeline(messages, {
            contextWindow: 8_000,
            maxOutputTokens: 1_000,
            counter,
            summarizer,
          });
          expect(timeline.requests.length).toBe(timeline.views.length);
          for (const request of timeline.requests) {
            if (request.error !== undefined) continue;
            expect(channelSum(request.governed)).toBe(request.governed.total);
            expect(request.governed.total).toBeLessThanOrEqual(timeline.usable);
            expect(request.cacheReadTokens + request.cacheWriteTokens).toBeLessThanOrEqual(
              request.governed.total,
            );
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
