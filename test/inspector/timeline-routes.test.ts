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
import { transcriptFiles } from "../support/transcripts.ts";

type Channels = ChannelTokens;
interface TimelineRequest {
  index: number;
  raw: Channels;
  governed: Channels;
  cachedTokens: number;
  events: { type: string; refs?: string[] }[];
}
interface TimelineAnswer {
  usable: number;
  requests: TimelineRequest[];
}

const channelSum = (channels: Channels) =>
  channels.system.reduce((sum, section) => sum + section.tokens, 0) +
  channels.summary +
  channels.history.user +
  channels.history.assistant +
  channels.toolOutputs +
  channels.currentInput;

const FILE = transcriptFiles.find((file) => file.includes("codemie-code/claude-code/"));
let harness: ServerHarness;
let sessionId: string;

beforeAll(async () => {
  expect(FILE).toBeDefined();
  harness = await startHarness({ contextWindow: 16_000 });
  const [conversation] = await importTranscriptFile(FILE!);
  const dump = conversationDump(conversation!, { now: new Date().toISOString(), prices: DEFAULT_PRICES });
  await harness.store.restoreSession({ ...dump, session: { ...dump.session, owner: "acme" } });
  sessionId = encodeURIComponent(conversation!.id);
});

afterAll(async () => {
  await harness?.close();
});

describe("inspector timeline routes", () => {
  it("report one request per replayed request with the replay's raw tokens, channels that add up, and cache hits within the payload", async () => {
    const timeline = (await (
      await harness.call(`/v1/sessions/${sessionId}/timeline`)
    ).json()) as TimelineAnswer;
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
      expect(request.cachedTokens).toBeLessThanOrEqual(request.governed.total);
    }
    expect(timeline.requests.some((request) => request.governed.total < request.raw.total)).toBe(true);
  });

  it("serve the payload of a request and the outputs offloaded in it; unknown requests and refs are 404", async () => {
    const timeline = (await (
      await harness.call(`/v1/sessions/${sessionId}/timeline`)
    ).json()) as TimelineAnswer;
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
            expect(request.cachedTokens).toBeLessThanOrEqual(request.governed.total);
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
