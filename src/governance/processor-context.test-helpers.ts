// A processor's context for tests of processors run on their own: nothing held back as still needed
// (`groundingTarget` 0), a fixed clock and sequential ids.
import { sequentialIds } from "../model/ids.ts";
import { FakeSummarizer } from "../test/fake-summarizer.ts";
import type { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { resolveGovernorSettings } from "./governor-settings.ts";
import { MessageTokenCache } from "./message-token-cache.ts";
import type { OffloadStore } from "./offload-store.ts";
import type { ProcessorContext } from "./processor.ts";

/** A context counting with `counter` (each message once) and offloading to `offloadStore`. */
export function processorContext(
  counter: FakeTokenCounter,
  offloadStore: OffloadStore,
  { protectTokens = 0, contextWindow = 100_000 }: { protectTokens?: number; contextWindow?: number } = {},
): ProcessorContext {
  return {
    settings: resolveGovernorSettings({ groundingTarget: 0, protectTokens }),
    window: { contextWindow, reservedOutput: 4_000, usable: contextWindow - 4_000 },
    fixedTokens: 0,
    tokensOf: new MessageTokenCache(counter).tokensOf,
    summarizer: new FakeSummarizer(),
    offloadStore,
    guard: {},
    force: false,
    ids: sequentialIds(),
    clock: () => new Date("2026-01-01T00:00:00Z"),
    emit: () => undefined,
  };
}
