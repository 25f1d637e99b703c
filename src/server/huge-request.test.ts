import { afterEach, describe, expect, it } from "vitest";
import { FakeSummarizer } from "../test/fake-summarizer.ts";
import { createExactCounter } from "../tokens/exact-counter.ts";
import { DEFAULT_LIMITS } from "./server-options.ts";
import { startHarness, type ServerHarness } from "./test-support/server-harness.test-helpers.ts";

const harnesses: ServerHarness[] = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((harness) => harness.close()));
});

const BODY_BYTES = 4 * 1024 * 1024;
const TICK_MS = 50;
/** The longest the event loop may stall while the huge request is processed. */
const MAX_GAP_MS = 500;

/** A chat-completions body of exactly `BODY_BYTES` bytes whose user message is `unit` repeated. */
function hugeBody(unit: (length: number) => string): string {
  const empty = JSON.stringify({ model: "m", messages: [{ role: "user", content: "" }] });
  return JSON.stringify({
    model: "m",
    messages: [{ role: "user", content: unit(BODY_BYTES - empty.length) }],
  });
}

/** Base64 of pseudo-random bytes: no spaces, short pre-tokens, few repeated pieces. */
function base64(length: number): string {
  const bytes = Buffer.alloc(Math.ceil((length * 3) / 4));
  let state = 7;
  for (let index = 0; index < bytes.length; index++) {
    state = (state * 1_103_515_245 + 12_345) & 0x7fffffff;
    bytes[index] = state >>> 16;
  }
  return bytes.toString("base64").slice(0, length);
}

/**
 * Posts `body` to the proxy while a timer ticks every `TICK_MS` and asks `/health` on each tick; returns the
 * longest gap between ticks (how long the event loop was stalled) and the health answers.
 */
async function postWhileWatching(harness: ServerHarness, body: string, headers: Record<string, string>) {
  const gaps: number[] = [];
  const health: Promise<number>[] = [];
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    gaps.push(now - last);
    last = now;
    health.push(harness.call("/health", { key: null }).then((response) => response.status));
  }, TICK_MS);
  try {
    const response = await harness.call("/v1/chat/completions", {
      method: "POST",
      body,
      headers: { "content-type": "application/json", ...headers },
    });
    const answer = (await response.json()) as { choices?: { message: { content: string } }[] };
    return { status: response.status, answer, gaps, health: await Promise.all(health) };
  } finally {
    clearInterval(timer);
  }
}

describe("a huge pathological request", () => {
  it.each([
    ["one repeated character", (length: number) => "a".repeat(length)],
    ["base64", base64],
  ])(
    "never stalls the server: /health keeps answering while a 4 MiB body of %s is governed and forwarded",
    async (_name, unit) => {
      const harness = await startHarness({
        responses: ["Received.", "Received again."],
        server: {
          engine: {
            // A window the whole message fits in, so it is counted, governed, forwarded and stored.
            contextWindow: 4_000_000,
            maxOutputTokens: 2_000,
            tokenCounter: await createExactCounter("o200k_base"),
            summarizer: new FakeSummarizer(),
          },
        },
      });
      harnesses.push(harness);
      const body = hugeBody(unit);
      // The default body limit admits it: no server option needed.
      expect(Buffer.byteLength(body)).toBe(DEFAULT_LIMITS.maxBodyBytes);

      const modes: Record<string, string>[] = [
        { "x-ctxkit-mode": "stateless" },
        { "x-ctxkit-session": "huge" },
      ];
      for (const headers of modes) {
        const { status, answer, gaps, health } = await postWhileWatching(harness, body, headers);
        expect(status).toBe(200);
        expect(answer.choices?.[0]?.message.content).toMatch(/^Received/);
        expect(health.every((code) => code === 200)).toBe(true);
        expect(Math.max(0, ...gaps)).toBeLessThan(MAX_GAP_MS);
      }
      const sent = (JSON.parse(body) as { messages: { content: string }[] }).messages[0]!.content;
      const forwarded = harness.upstream.requests.map((request) => request.body.messages?.at(-1)?.content);
      expect(forwarded).toEqual([sent, sent]);
    },
  );
});
