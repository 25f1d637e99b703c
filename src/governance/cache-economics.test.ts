import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cacheProfiles } from "../pricing/cache-profile.ts";
import { checkpointPays, requestsUntilDue } from "./cache-economics.ts";

const anthropic = cacheProfiles.anthropic;

describe("checkpointPays", () => {
  it("waits for a batch worth its rewrite, though an earlier one would already pay over the remaining requests", () => {
    // 6,000 tokens saved over 60 more requests (36k read) beat rewriting 20,000 (23k extra): it pays at once.
    const batch = { savedTokens: 6_000, rewrittenTokens: 20_000, remainingRequests: 60 };
    // Kept for 10 requests, what it removes has cost 3k of reads: a rewrite now splits the saving too early.
    expect(checkpointPays({ ...batch, requestsSinceLast: 10 }, anthropic)).toBe(false);
    // Kept for 80 requests it has cost 24k, as much as the rewrite: due.
    expect(checkpointPays({ ...batch, requestsSinceLast: 80 }, anthropic)).toBe(true);
  });

  it("never takes a checkpoint that does not pay over the remaining requests, however long it waited", () => {
    expect(
      checkpointPays(
        { savedTokens: 1_000, rewrittenTokens: 50_000, remainingRequests: 10, requestsSinceLast: 10_000 },
        anthropic,
      ),
    ).toBe(false);
  });

  it("takes a free rewrite (the cache expired) at once", () => {
    expect(
      checkpointPays(
        { savedTokens: 500, rewrittenTokens: 0, remainingRequests: 5, requestsSinceLast: 1 },
        cacheProfiles.openai,
      ),
    ).toBe(true);
  });

  it("is monotone: a larger saving, a longer wait or more remaining requests never turn a due checkpoint down", () => {
    const size = fc.integer({ min: 0, max: 200_000 });
    const requests = fc.integer({ min: 0, max: 400 });
    fc.assert(
      fc.property(
        size,
        size,
        requests,
        requests,
        size,
        requests,
        requests,
        (saved, rewritten, remaining, since, more, extra, wait) => {
          const due = checkpointPays(
            {
              savedTokens: saved,
              rewrittenTokens: rewritten,
              remainingRequests: remaining,
              requestsSinceLast: since,
            },
            anthropic,
          );
          const larger = checkpointPays(
            {
              savedTokens: saved + more,
              rewrittenTokens: rewritten,
              remainingRequests: remaining + extra,
              requestsSinceLast: since + wait,
            },
            anthropic,
          );
          if (due) expect(larger).toBe(true);
        },
      ),
    );
  });

  it("says when a checkpoint that pays but is not yet due will be, and it is due then", () => {
    const batch = {
      savedTokens: 6_000,
      rewrittenTokens: 20_000,
      remainingRequests: 60,
      requestsSinceLast: 10,
    };
    const wait = requestsUntilDue(batch, anthropic);
    expect(wait).toBeGreaterThan(0);
    // What it removes piles up steadily: after the wait the batch has grown in proportion, and is due.
    const since = batch.requestsSinceLast + wait;
    const grown = { ...batch, savedTokens: (batch.savedTokens * since) / 10, requestsSinceLast: since };
    expect(checkpointPays(grown, anthropic)).toBe(true);
    const justBefore = since - 1;
    const earlier = {
      ...batch,
      savedTokens: (batch.savedTokens * justBefore) / 10,
      requestsSinceLast: justBefore,
    };
    expect(checkpointPays(earlier, anthropic)).toBe(false);
    // Due now, or not paying at all: no wait.
    expect(requestsUntilDue({ ...batch, requestsSinceLast: 80 }, anthropic)).toBe(0);
    expect(requestsUntilDue({ ...batch, remainingRequests: 1 }, anthropic)).toBe(0);
  });
});
