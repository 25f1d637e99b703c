import { describe, expect, it } from "vitest";
import { createContextEngine } from "../../engine/context-engine.ts";
import type { EngineSettings } from "../../engine/engine-settings.ts";
import { createGovernor } from "../../governance/governor.ts";
import type { Message } from "../../model/message.ts";
import { MemorySessionStore } from "../../store/memory/index.ts";
import { FakeSummarizer } from "../../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../../test/fake-token-counter.ts";
import { HistoryBuilder } from "../../test/history-builder.ts";
import { StatelessGovernance } from "./stateless-governance.ts";

/** A coding session of `steps` file reads, each a request boundary: the histories a stateless client sends. */
function requestHistories(steps: number): Message[][] {
  const builder = new HistoryBuilder().user("Find where the config is parsed and fix the bug.");
  const histories: Message[][] = [builder.build()];
  for (let step = 0; step < steps; step++) {
    const output = Array.from(
      { length: 60 },
      (_, line) => `src/file${step}.ts:${line} const value${line} = ${step};`,
    );
    builder.step([{ name: "read_file", input: { path: `src/file${step}.ts` }, output: output.join("\n") }]);
    histories.push(builder.build());
  }
  return histories;
}

/** The same history as a client resends it: equal content, fresh ids (as each request's import makes them). */
const resent = (history: readonly Message[]): Message[] =>
  history.map((message, index) => ({ ...message, id: `client_${Math.random()}_${index}` }));

async function settings(): Promise<EngineSettings> {
  const engine = await createContextEngine({
    store: new MemorySessionStore(),
    contextWindow: 16_000,
    maxOutputTokens: 1_000,
    tokenCounter: new FakeTokenCounter(),
    summarizer: new FakeSummarizer(),
  });
  return engine.settings;
}

const text = (messages: readonly Message[]) =>
  messages.map((message) => JSON.stringify([message.role, message.kind, message.content]));

describe("StatelessGovernance", () => {
  it("governs a resent, growing history exactly as one long-lived governor governs the session", async () => {
    const engineSettings = await settings();
    const governance = new StatelessGovernance();
    const steady = createGovernor({
      contextWindow: engineSettings.contextWindow,
      reservedOutputTokens: engineSettings.reservedOutputTokens,
      counter: engineSettings.counter,
      summarizer: engineSettings.summarizer,
      pipeline: engineSettings.pipeline,
      recall: false,
      clock: engineSettings.clock,
    });
    let checkpoints = 0;
    const histories = requestHistories(30);
    for (const history of histories) {
      const result = await governance.govern(
        { scope: "tenant", fixed: "system", fixedTokens: 200, history: resent(history) },
        engineSettings,
      );
      const expected = await steady.prepare(history, { fixedTokens: 200 });
      expect(text(result.messages)).toEqual(text(expected.messages));
      expect(result.checkpoint).toBe(expected.checkpoint);
      if (result.checkpoint) checkpoints++;
    }
    // The window filled several times over, yet only a few requests rewrote older history.
    expect(checkpoints).toBeGreaterThan(0);
    expect(checkpoints).toBeLessThan(histories.length / 3);
  });

  it("keeps the payload's prefix between checkpoints, where a fresh governor per request rewrites it", async () => {
    const engineSettings = await settings();
    const governance = new StatelessGovernance();
    const keeps = (sent: readonly string[], before: readonly string[]) =>
      JSON.stringify(sent.slice(0, before.length)) === JSON.stringify(before);
    let previous: readonly string[] = [];
    let previousFresh: readonly string[] = [];
    let broken = 0;
    let brokenFresh = 0;
    for (const history of requestHistories(30)) {
      const request = { scope: "tenant", fixed: "system", fixedTokens: 200, history: resent(history) };
      const result = await governance.govern(request, engineSettings);
      const sent = text(result.messages);
      if (!result.checkpoint) expect(keeps(sent, previous)).toBe(true);
      if (!keeps(sent, previous)) broken++;
      previous = sent;
      const fresh = text((await new StatelessGovernance().govern(request, engineSettings)).messages);
      if (!keeps(fresh, previousFresh)) brokenFresh++;
      previousFresh = fresh;
    }
    expect(broken).toBeLessThan(5);
    expect(brokenFresh).toBeGreaterThan(3 * broken);
  });

  it("answers a repeated request with the same payload, and keeps scopes and fixed parts apart", async () => {
    const engineSettings = await settings();
    const governance = new StatelessGovernance();
    const histories = requestHistories(12);
    for (const history of histories.slice(0, -1))
      await governance.govern(
        { scope: "a", fixed: "s", fixedTokens: 200, history: resent(history) },
        engineSettings,
      );
    const last = histories.at(-1)!;
    const first = await governance.govern(
      { scope: "a", fixed: "s", fixedTokens: 200, history: resent(last) },
      engineSettings,
    );
    const again = await governance.govern(
      { scope: "a", fixed: "s", fixedTokens: 200, history: resent(last) },
      engineSettings,
    );
    expect(first.continued).toBe("prefix");
    expect(again.continued).toBe("repeat");
    expect(again.events).toEqual([]);
    expect(text(again.messages)).toEqual(text(first.messages));

    const otherTenant = await governance.govern(
      { scope: "b", fixed: "s", fixedTokens: 200, history: resent(last) },
      engineSettings,
    );
    const otherSystem = await governance.govern(
      { scope: "a", fixed: "t", fixedTokens: 200, history: resent(last) },
      engineSettings,
    );
    expect(otherTenant.continued).toBe("fresh");
    expect(otherSystem.continued).toBe("fresh");
  });

  it("keeps states within its bounds, the least recently used going first", async () => {
    const engineSettings = await settings();
    const histories = requestHistories(4);
    const request = (scope: string, history: readonly Message[]) => ({
      scope,
      fixed: "s",
      fixedTokens: 200,
      history: resent(history),
    });
    const bounded = new StatelessGovernance({ maxStates: 2 });
    await bounded.govern(request("a", histories[1]!), engineSettings);
    await bounded.govern(request("b", histories[1]!), engineSettings);
    expect((await bounded.govern(request("a", histories[2]!), engineSettings)).continued).toBe("prefix");
    // a's two states fill the cache: b's went first.
    expect((await bounded.govern(request("b", histories[2]!), engineSettings)).continued).toBe("fresh");

    const tiny = new StatelessGovernance({ maxStateCharacters: 10, maxResultCharacters: 10 });
    await tiny.govern(request("a", histories[1]!), engineSettings);
    expect((await tiny.govern(request("a", histories[2]!), engineSettings)).continued).toBe("fresh");
    expect((await tiny.govern(request("a", histories[2]!), engineSettings)).continued).toBe("fresh");
  });

  it("maps each unchanged governed message to the history message it came from", async () => {
    const engineSettings = await settings();
    const history = requestHistories(20).at(-1)!;
    const result = await new StatelessGovernance().govern(
      { scope: "a", fixed: "s", fixedTokens: 200, history },
      engineSettings,
    );
    expect(result.checkpoint).toBe(true);
    const sources = result.sources.filter((source) => source !== undefined);
    expect(sources.length).toBeGreaterThan(0);
    expect(sources.length).toBeLessThan(result.messages.length);
    result.messages.forEach((message, index) => {
      const source = result.sources[index];
      if (source !== undefined) expect(message.content).toBe(history[source]!.content);
    });
    // The newest step is never rewritten: it comes back unchanged, last.
    expect(result.sources.at(-1)).toBe(history.length - 1);
  });
});
