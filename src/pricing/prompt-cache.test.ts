import { describe, expect, it } from "vitest";
import { cacheProfileFor, cacheProfiles } from "./cache-profile.ts";
import { fixedSegment } from "./payload-segments.ts";
import { PromptCache, type PayloadSegment } from "./prompt-cache.ts";

const MINUTE = 60_000;
let made = 0;
const segment = (tokens: number, blocks = 1): PayloadSegment => ({ hash: `s${made++}`, tokens, blocks });

/** A payload that only grows: `system` then `count` messages of `tokens` each. */
function growing(count: number, tokens = 1_000): PayloadSegment[] {
  return [segment(5_000), ...Array.from({ length: count }, () => segment(tokens))];
}

describe("PromptCache, Anthropic", () => {
  const anthropic = () => new PromptCache(cacheProfiles.anthropic);

  it("caches nothing without breakpoints: every token is billed at the input price", () => {
    const cache = anthropic();
    const payload = growing(10);
    expect(cache.bill({ at: 0, segments: payload })).toMatchObject({
      cacheRead: 0,
      cacheWrite: 0,
      uncached: 15_000,
    });
    expect(cache.bill({ at: 1_000, segments: payload })).toMatchObject({ cacheRead: 0, costUnits: 15_000 });
  });

  it("writes up to the last breakpoint, reads it back on the next request, and bills the tail after it as input", () => {
    const cache = anthropic();
    const payload = growing(12);
    const first = cache.bill({ at: 0, segments: payload.slice(0, 11), breakpoints: [0, 9] });
    expect(first).toMatchObject({ tokens: 15_000, cacheRead: 0, cacheWrite: 14_000, uncached: 1_000 });
    expect(first.costUnits).toBe(14_000 * 1.25 + 1_000);
    const second = cache.bill({ at: 10_000, segments: payload, breakpoints: [0, 9, 12] });
    expect(second).toMatchObject({ cacheRead: 14_000, cacheWrite: 3_000, uncached: 0 });
    expect(second.costUnits).toBeCloseTo(14_000 * 0.1 + 3_000 * 1.25);
  });

  it("expires an entry five minutes after its last use, and a hit refreshes it", () => {
    const cache = anthropic();
    const payload = growing(4);
    cache.bill({ at: 0, segments: payload.slice(0, 3), breakpoints: [2] });
    expect(cache.bill({ at: 4 * MINUTE, segments: payload.slice(0, 4), breakpoints: [2, 3] }).cacheRead).toBe(
      7_000,
    );
    // 8 minutes after the write, but 4 after the refresh: still there.
    expect(cache.bill({ at: 8 * MINUTE, segments: payload.slice(0, 4), breakpoints: [2, 3] }).cacheRead).toBe(
      8_000,
    );
    expect(cache.bill({ at: 14 * MINUTE, segments: payload, breakpoints: [3, 4] }).cacheRead).toBe(0);
  });

  it("keeps 1-hour entries an hour, written at twice the input price", () => {
    const cache = anthropic();
    const payload = growing(3);
    const first = cache.bill({ at: 0, segments: payload.slice(0, 3), breakpoints: [2], longTtl: true });
    expect(first.costUnits).toBe(7_000 * 2);
    expect(
      cache.bill({ at: 40 * MINUTE, segments: payload, breakpoints: [3], longTtl: true }).cacheRead,
    ).toBe(7_000);
  });

  it("finds an earlier entry only within about 20 blocks before a breakpoint", () => {
    const near = anthropic();
    const payload = growing(40);
    near.bill({ at: 0, segments: payload.slice(0, 21), breakpoints: [20] });
    expect(near.bill({ at: 1_000, segments: payload.slice(0, 36), breakpoints: [35] }).cacheRead).toBe(
      25_000,
    );
    const far = anthropic();
    far.bill({ at: 0, segments: payload.slice(0, 11), breakpoints: [10] });
    expect(far.bill({ at: 1_000, segments: payload.slice(0, 36), breakpoints: [35] }).cacheRead).toBe(0);
  });

  it("loses everything after a rewritten message, however the breakpoints sit", () => {
    const cache = anthropic();
    const payload = growing(10);
    cache.bill({ at: 0, segments: payload, breakpoints: [0, 9, 10] });
    const rewritten = [...payload.slice(0, 3), segment(200), ...payload.slice(4)];
    // Only the system prompt's own entry matches: the messages' entries ended after the rewrite.
    expect(cache.bill({ at: 1_000, segments: rewritten, breakpoints: [0, 9, 10] }).cacheRead).toBe(5_000);
  });

  it("never writes a prefix shorter than the model's minimum", () => {
    const cache = new PromptCache(cacheProfileFor("claude-opus-4-5"));
    const small = [segment(1_500), segment(1_500)];
    cache.bill({ at: 0, segments: small, breakpoints: [0, 1] });
    expect(cache.bill({ at: 1_000, segments: small, breakpoints: [0, 1] }).cacheRead).toBe(0);
    const large = [segment(5_000)];
    cache.bill({ at: 2_000, segments: large, breakpoints: [0] });
    expect(cache.bill({ at: 3_000, segments: large, breakpoints: [0] }).cacheRead).toBe(5_000);
  });
});

describe("PromptCache, automatic (OpenAI)", () => {
  it("reads the longest prefix shared with a live earlier request, in 128-token steps from 1,024", () => {
    const cache = new PromptCache(cacheProfiles.openai);
    const payload = [segment(1_000), segment(333), segment(500), segment(700)];
    expect(cache.bill({ at: 0, segments: payload.slice(0, 3) })).toMatchObject({
      cacheRead: 0,
      cacheWrite: 1_833,
    });
    const second = cache.bill({ at: 1_000, segments: payload });
    expect(second.cacheRead).toBe(1_792); // 1,833 rounded down to 14 × 128
    expect(second.costUnits).toBeCloseTo(1_792 * 0.1 + (2_533 - 1_792));
    const rewritten = [payload[0]!, segment(333), payload[2]!];
    expect(cache.bill({ at: 2_000, segments: rewritten }).cacheRead).toBe(0); // 1,000 < 1,024
  });

  it("forgets a prefix after five minutes without use", () => {
    const cache = new PromptCache(cacheProfiles.openai);
    const payload = growing(3);
    cache.bill({ at: 0, segments: payload.slice(0, 3) });
    expect(cache.bill({ at: 4 * MINUTE, segments: payload }).cacheRead).toBe(6_912);
    expect(cache.bill({ at: 10 * MINUTE, segments: payload }).cacheRead).toBe(0);
  });

  it("prices a model's own cached read (GPT-4o half price, GPT-5 a tenth)", () => {
    expect(cacheProfileFor("gpt-4o").read).toBe(0.5);
    expect(cacheProfileFor("openai:gpt-5-mini").read).toBeCloseTo(0.1);
    expect(cacheProfileFor("claude-sonnet-4-5").output).toBe(5);
    expect(cacheProfileFor("unknown-local-model").provider).toBe("none");
    // No cache modelled, but the model's output still costs its ratio (summaries, re-reads' answers).
    expect(cacheProfileFor("claude-sonnet-4-5", { provider: "none" })).toMatchObject({ read: 1, output: 5 });
    expect(cacheProfileFor("unknown-local-model").output).toBe(1);
  });

  it("gives Gemini models the implicit-caching minimum of their generation (2.5: 2,048; 3 and later: 4,096)", () => {
    expect(cacheProfileFor("gemini-2.5-flash").minTokens).toBe(2_048);
    expect(cacheProfileFor("gemini-2.5-pro").minTokens).toBe(2_048);
    expect(cacheProfileFor("gemini-3-pro").minTokens).toBe(4_096);
  });
});

describe("PromptCache with a caller that knows what is unchanged", () => {
  it("with `unchanged`, reads only the segments a growing payload added, and bills it as without", () => {
    const segments = Array.from({ length: 3_000 }, (_, index) => fixedSegment(`message ${index}`, 40));
    for (const profile of [cacheProfiles.anthropic, cacheProfiles.openai]) {
      const [trusted, compared] = [new PromptCache(profile), new PromptCache(profile)];
      let length = 0;
      for (let end = 2_000; end <= 2_100; end += 4) {
        let reads = 0;
        const payload = new Proxy(segments.slice(0, end), {
          get(target, property, receiver) {
            if (typeof property === "string" && /^\d+$/.test(property)) reads++;
            return Reflect.get(target, property, receiver) as unknown;
          },
        }) as readonly PayloadSegment[];
        const request = { at: end * 1_000, segments: payload, breakpoints: [0, end - 1] };
        const bill = trusted.bill({ ...request, unchanged: length });
        if (length > 0) expect(reads).toBeLessThan(20);
        expect(bill).toEqual(compared.bill(request));
        length = end;
      }
    }
  });
});
