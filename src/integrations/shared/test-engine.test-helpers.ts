// Shared by the adapters' tests: an engine over a store with a given window, a fake counter and summarizer.
import { createContextEngine, type ContextEngine } from "../../engine/context-engine.ts";
import type { SessionStore } from "../../store/session-store.ts";
import { FakeSummarizer } from "../../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../../test/fake-token-counter.ts";

/** An engine over `store`: a `contextWindow`-token window, 1,000 tokens of output, fake counter and summarizer. */
export function testEngine(store: SessionStore, contextWindow: number): Promise<ContextEngine> {
  return createContextEngine({
    store,
    contextWindow,
    maxOutputTokens: 1_000,
    tokenCounter: new FakeTokenCounter(),
    summarizer: new FakeSummarizer(),
  });
}
