// A governor state written before the governor kept its state in one object (fixtures/governor-state-v1.json, a
// snapshot taken by that code halfway through a real session) is still what the governor computes, and restores:
// stored sessions keep governing as if the process had never stopped. The text of its summary (and the usage
// figures that follow from its size) was brought up to date when the offline summarizer changed what it keeps;
// the state's shape is the earlier governor's.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { requestPoints } from "../replay/replay.ts";
import { createExtractiveSummarizer } from "../summarize/index.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { SOUND_RECORDER_SESSION, transcriptMessages } from "../../test/support/transcripts.ts";
import { createGovernor, type GovernorOptions } from "./governor.ts";
import { parseGovernorState } from "./governor-state.ts";
import { MemoryOffloadStore } from "./offload-store.ts";
import { preset } from "./presets.ts";

const fixture = JSON.parse(
  readFileSync(new URL("./fixtures/governor-state-v1.json", import.meta.url), "utf8"),
) as { requests: number; now: number; state: unknown };

describe("a governor state stored by the earlier governor", () => {
  it("is the state this governor computes, and restored, governs the rest of the session identically", async () => {
    const messages = await transcriptMessages(SOUND_RECORDER_SESSION);
    const counter = new FakeTokenCounter();
    let now = Date.parse("2026-01-01T00:00:00Z");
    const options: GovernorOptions = {
      contextWindow: 24_000,
      counter,
      summarizer: createExtractiveSummarizer({ counter }),
      pipeline: preset("default", { compactSettledHistory: true, maxTurns: 6 }),
      offloadStore: new MemoryOffloadStore(),
      clock: () => new Date(now),
      ids: (prefix) => `${prefix}-${now}`,
    };
    const steady = createGovernor(options);
    const points = requestPoints(messages);
    const feed = (request: Awaited<ReturnType<typeof steady.prepare>>) =>
      Math.round(request.tokens.total * 1.3);
    for (const point of points.slice(0, fixture.requests)) {
      now += 20_000;
      const request = await steady.prepare(messages.slice(0, point), { fixedTokens: 1_000 });
      steady.observeUsage(request.tokens, feed(request));
    }
    expect(now).toBe(fixture.now);
    // The fixture predates the call ids and result digests loop detection keeps now, the session's reuse
    // counts, the count of optional checks skipped in a row and `piled.since`, the request of the last checkpoint
    // (all optional in the state: the reuse counts are taken again from the history when absent, the skipped
    // checks inferred from the pending postponement, `since` restored as the session's start).
    // The cache anchor (where the prefix the next rewrite keeps ends) is placed past small outputs no processor
    // changes since the fixture was taken: the anchor and the breakpoints it left are compared apart.
    const { reuse: _reuse, anchor, cached, ...snapshot } = steady.snapshot();
    const { skippedChecks, since, ...piled } = snapshot.piled;
    expect(skippedChecks).toBe(1);
    const withoutResults = {
      ...snapshot,
      piled,
      recentCalls: snapshot.recentCalls.map(({ signature, label }) => ({ signature, label })),
    };
    const {
      anchor: fixtureAnchor,
      cached: fixtureCached,
      ...fixtureState
    } = fixture.state as {
      anchor?: number;
      cached: { at: number; ends: number[] };
    };
    expect(withoutResults).toEqual(fixtureState);
    expect(cached?.at).toBe(fixtureCached.at);
    expect(cached?.ends).toEqual(fixtureCached.ends.filter((end) => end !== fixtureAnchor));
    expect(anchor).toBeUndefined();
    expect(since).toBeGreaterThan(0);
    expect(since).toBeLessThanOrEqual(snapshot.requests);

    const restored = createGovernor(options);
    const next = points[fixture.requests]!;
    expect(restored.restore(parseGovernorState(fixture.state), messages.slice(0, next))).toBe(true);
    let checkpoints = 0;
    for (const point of points.slice(fixture.requests)) {
      now += 20_000;
      const history = messages.slice(0, point);
      const expected = await steady.prepare(history, { fixedTokens: 1_000 });
      const actual = await restored.prepare(history, { fixedTokens: 1_000 });
      expect(JSON.stringify(actual.messages)).toBe(JSON.stringify(expected.messages));
      expect(actual.checkpoint).toBe(expected.checkpoint);
      if (expected.checkpoint) checkpoints++;
      steady.observeUsage(expected.tokens, feed(expected));
      restored.observeUsage(actual.tokens, feed(actual));
    }
    expect(checkpoints).toBeGreaterThan(0);
    expect(restored.snapshot()).toEqual(steady.snapshot());
  });
});
