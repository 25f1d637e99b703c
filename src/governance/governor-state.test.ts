// A governor restored from its own snapshot before every request prepares exactly what one that never stopped
// prepares: the same messages, byte for byte, the same checkpoints — on a real session, with compaction forced
// by a small window and the provider's usage fed back.
import { describe, expect, it } from "vitest";
import { requestPoints } from "../replay/replay.ts";
import { createExtractiveSummarizer } from "../summarize/index.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { SOUND_RECORDER_SESSION, transcriptMessages } from "../../test/support/transcripts.ts";
import { createGovernor, type GovernorOptions } from "./governor.ts";
import { parseGovernorState } from "./governor-state.ts";
import { MemoryOffloadStore } from "./offload-store.ts";
import { preset } from "./presets.ts";

describe("Governor snapshot and restore", () => {
  it("restored before every request, prepares byte-identical payloads and takes the same checkpoints", async () => {
    const messages = await transcriptMessages(SOUND_RECORDER_SESSION);
    const counter = new FakeTokenCounter();
    const offloadStore = new MemoryOffloadStore();
    let now = Date.parse("2026-01-01T00:00:00Z");
    const options: GovernorOptions = {
      contextWindow: 24_000,
      counter,
      summarizer: createExtractiveSummarizer({ counter }),
      pipeline: preset("default", { compactSettledHistory: true }),
      offloadStore,
      clock: () => new Date(now),
      ids: (prefix) => `${prefix}-${now}`,
    };
    const steady = createGovernor(options);
    let state = steady.snapshot();
    let checkpoints = 0;
    for (const point of requestPoints(messages)) {
      now += 20_000;
      const history = messages.slice(0, point);
      const restarted = createGovernor(options);
      expect(restarted.restore(parseGovernorState(JSON.parse(JSON.stringify(state))), history)).toBe(true);
      const expected = await steady.prepare(history, { fixedTokens: 1_000 });
      const actual = await restarted.prepare(history, { fixedTokens: 1_000 });
      expect(JSON.stringify(actual.messages)).toBe(JSON.stringify(expected.messages));
      expect(actual.checkpoint).toBe(expected.checkpoint);
      expect(actual.cacheAnchors).toEqual(expected.cacheAnchors);
      if (expected.checkpoint) checkpoints++;
      const reported = Math.round(expected.tokens.total * 1.3);
      steady.observeUsage(expected.tokens, reported);
      restarted.observeUsage(actual.tokens, reported);
      state = restarted.snapshot();
      expect(state).toEqual(steady.snapshot());
    }
    expect(checkpoints).toBeGreaterThan(3);
  });

  it("refuses a state that does not fit the history, and changes nothing then", async () => {
    const messages = await transcriptMessages(SOUND_RECORDER_SESSION);
    const counter = new FakeTokenCounter();
    const options = { contextWindow: 24_000, counter, summarizer: createExtractiveSummarizer({ counter }) };
    const governor = createGovernor(options);
    const history = messages.slice(0, 20);
    await governor.prepare(history);
    const state = governor.snapshot();
    const fresh = createGovernor(options);
    expect(fresh.restore(state, messages.slice(0, 5))).toBe(false);
    expect(fresh.view).toEqual([]);
    expect(() => parseGovernorState({ ...state, version: 2 })).toThrow(/governor state/);
  });

  it("keeps the session's reuse counts, and counts them again when the stored ones cannot be read", async () => {
    const messages = await transcriptMessages(SOUND_RECORDER_SESSION);
    const counter = new FakeTokenCounter();
    const options = { contextWindow: 24_000, counter, summarizer: createExtractiveSummarizer({ counter }) };
    const governor = createGovernor(options);
    const history = messages.slice(0, 120);
    await governor.prepare(history);
    const state = parseGovernorState(JSON.parse(JSON.stringify(governor.snapshot())));
    expect(state.reuse?.replies).toBeGreaterThan(10);
    // Counts of another shape (another version's buckets): the rest of the state stays, the counts are redone.
    const odd = parseGovernorState({ ...state, reuse: { ...state.reuse, alive: { read: [1, 2] } } });
    expect(odd.reuse).toBeUndefined();
    expect(odd.view).toEqual(state.view);
    const restored = createGovernor(options);
    expect(restored.restore(odd, history)).toBe(true);
    expect(restored.snapshot().reuse).toEqual(governor.snapshot().reuse);
  });
});
