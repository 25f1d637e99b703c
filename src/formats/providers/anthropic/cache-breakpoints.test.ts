import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  MAX_ANTHROPIC_BREAKPOINTS,
  comparePositions,
  planAnthropicBreakpoints,
  type BreakpointPlanInput,
  type BreakpointPosition,
  type CacheBreakpoint,
  type CacheTtl,
} from "./cache-breakpoints.ts";
import { anthropicMinimumCacheableTokens } from "../../../pricing/cache-minimums.ts";

const message = (index: number): BreakpointPosition => ({ at: "message", index });
const tools: BreakpointPosition = { at: "tools" };
const system: BreakpointPosition = { at: "system" };

/** An agent loop's request: user, (assistant call, tool result) × steps. */
function loop(steps: number, overrides: Partial<BreakpointPlanInput> = {}): BreakpointPlanInput {
  const messageCount = 1 + 2 * steps;
  return {
    messageCount,
    newestAssistantIndex: steps === 0 ? -1 : messageCount - 2,
    hasTools: true,
    hasSystem: true,
    tokensThrough: () => 100_000,
    minTokens: 1_024,
    ...overrides,
  };
}

const rank = (ttl: CacheTtl) => (ttl === "1h" ? 2 : 1);

/** Longer TTLs first, in request order (positions distinct). */
function inOrder(breakpoints: readonly CacheBreakpoint[]): boolean {
  const sorted = [...breakpoints].sort((a, b) => comparePositions(a.position, b.position));
  return sorted.every((marker, index) => index === 0 || rank(sorted[index - 1]!.ttl) >= rank(marker.ttl));
}

describe("planAnthropicBreakpoints", () => {
  it("marks the last tool, the system prompt, the newest message and the previous request's newest", () => {
    // user 0, assistant 1, tool 2, assistant 3, tool 4: request k was [0..2]; its newest message (2) is what it wrote.
    expect(planAnthropicBreakpoints(loop(2))).toEqual([
      { position: tools, ttl: "5m" },
      { position: system, ttl: "5m" },
      { position: message(2), ttl: "5m" },
      { position: message(4), ttl: "5m" },
    ]);
  });

  it("with fewer than two messages, marks what there is", () => {
    expect(planAnthropicBreakpoints(loop(0)).map((marker) => marker.position)).toEqual([
      tools,
      system,
      message(0),
    ]);
    const empty = { ...loop(0), messageCount: 0 };
    expect(planAnthropicBreakpoints(empty).map((marker) => marker.position)).toEqual([tools, system]);
    expect(
      planAnthropicBreakpoints({ ...empty, hasTools: false, hasSystem: false }).map(
        (marker) => marker.position,
      ),
    ).toEqual([]);
  });

  it("puts the sliding breakpoint before a request-only notice, never on it", () => {
    // user 0, assistant 1, tool 2, notice 3 (this request only).
    const plan = planAnthropicBreakpoints({
      ...loop(1),
      messageCount: 4,
      newestAssistantIndex: 1,
      ephemeralTail: 1,
    });
    expect(plan.map((marker) => marker.position)).toEqual([tools, system, message(0), message(2)]);
  });

  it("skips a breakpoint whose prefix is shorter than the model's minimum", () => {
    const sizes = { tools: 300, system: 900, messages: [200, 2_000, 1_000] };
    const tokensThrough = (position: BreakpointPosition): number => {
      if (position.at === "tools") return sizes.tools;
      const base = sizes.tools + sizes.system;
      if (position.at === "system") return base;
      return base + sizes.messages.slice(0, position.index + 1).reduce((sum, size) => sum + size, 0);
    };
    const input = { ...loop(1), tokensThrough };
    // Sonnet (1,024): the tools alone (300) are too short; the system prefix (1,200) and later ones are not.
    expect(
      planAnthropicBreakpoints({
        ...input,
        minTokens: anthropicMinimumCacheableTokens("claude-sonnet-4-5"),
      }).map((marker) => marker.position),
    ).toEqual([system, message(0), message(2)]);
    // Haiku 4.5 (4,096): only the whole prefix (4,400) is long enough.
    expect(
      planAnthropicBreakpoints({
        ...input,
        minTokens: anthropicMinimumCacheableTokens("claude-haiku-4-5"),
      }).map((marker) => marker.position),
    ).toEqual([message(2)]);
  });

  it("keeps the caller's breakpoints and adds only up to four in all, the most valuable first", () => {
    const existing: CacheBreakpoint[] = [
      { position: tools, ttl: "5m" },
      { position: message(1), ttl: "5m" },
    ];
    const plan = planAnthropicBreakpoints({ ...loop(2), existing });
    expect(plan.map((marker) => marker.position)).toEqual([message(2), message(4)]);
    const three = [...existing, { position: system, ttl: "5m" as const }];
    expect(
      planAnthropicBreakpoints({ ...loop(2), existing: three }).map((marker) => marker.position),
    ).toEqual([message(4)]);
    const four = [...three, { position: message(0), ttl: "5m" as const }];
    expect(planAnthropicBreakpoints({ ...loop(2), existing: four })).toEqual([]);
    // A position the caller marked is not marked twice.
    const onNewest = [{ position: message(4), ttl: "5m" as const }];
    expect(
      planAnthropicBreakpoints({ ...loop(2), existing: onNewest }).map((marker) => marker.position),
    ).toEqual([tools, system, message(2)]);
  });

  it("uses the 1-hour TTL when asked, never after a shorter one", () => {
    expect(planAnthropicBreakpoints({ ...loop(2), ttl: "1h" }).every((marker) => marker.ttl === "1h")).toBe(
      true,
    );
    // The caller's 5-minute system breakpoint: ours before it may be 1 h, ours after it must be 5 min.
    const existing = [{ position: system, ttl: "5m" as const }];
    const plan = planAnthropicBreakpoints({ ...loop(2), ttl: "1h", existing });
    expect(plan).toEqual([
      { position: tools, ttl: "1h" },
      { position: message(2), ttl: "5m" },
      { position: message(4), ttl: "5m" },
    ]);
    expect(inOrder([...plan, ...existing])).toBe(true);
    // The caller's 1-hour breakpoint on the newest message: ours before it take 1 h too (its write covers them).
    const late = [{ position: message(4), ttl: "1h" as const }];
    const before = planAnthropicBreakpoints({ ...loop(2), existing: late });
    expect(before.map((marker) => marker.ttl)).toEqual(["1h", "1h", "1h"]);
  });

  it("property: never a fifth breakpoint, never a 1 h after a 5 min, every one past the minimum", () => {
    const position = (count: number) =>
      fc.oneof(
        fc.constant(tools),
        fc.constant(system),
        fc.integer({ min: 0, max: Math.max(0, count - 1) }).map(message),
      );
    const scenario = fc
      .record({
        messageCount: fc.integer({ min: 0, max: 30 }),
        assistantAt: fc.integer({ min: -1, max: 29 }),
        ephemeralTail: fc.integer({ min: 0, max: 2 }),
        hasTools: fc.boolean(),
        hasSystem: fc.boolean(),
        minTokens: fc.constantFrom(0, 1_024, 2_048, 4_096),
        perPart: fc.integer({ min: 1, max: 3_000 }),
        ttl: fc.constantFrom<CacheTtl>("5m", "1h"),
      })
      .chain((base) =>
        fc
          .uniqueArray(position(base.messageCount), {
            maxLength: 6,
            selector: (at) => JSON.stringify(at),
          })
          .chain((positions) =>
            fc
              .array(fc.constantFrom<CacheTtl>("5m", "1h"), {
                minLength: positions.length,
                maxLength: positions.length,
              })
              .map((ttls) => ({ ...base, positions, ttls })),
          ),
      );
    fc.assert(
      fc.property(scenario, (s) => {
        // The caller's markers, in order: TTLs sorted longest first along the request.
        const sorted = [...s.positions].sort(comparePositions);
        const ttls = [...s.ttls].sort((a, b) => rank(b) - rank(a));
        const existing = sorted.map((at, index) => ({ position: at, ttl: ttls[index]! }));
        const newestAssistantIndex = s.assistantAt < s.messageCount ? s.assistantAt : -1;
        const tokensThrough = (at: BreakpointPosition) =>
          s.perPart * (at.at === "tools" ? 1 : at.at === "system" ? 2 : 3 + at.index);
        const plan = planAnthropicBreakpoints({
          messageCount: s.messageCount,
          newestAssistantIndex,
          ephemeralTail: s.ephemeralTail,
          hasTools: s.hasTools,
          hasSystem: s.hasSystem,
          tokensThrough,
          existing,
          minTokens: s.minTokens,
          ttl: s.ttl,
        });
        expect(plan.length + existing.length).toBeLessThanOrEqual(
          Math.max(MAX_ANTHROPIC_BREAKPOINTS, existing.length),
        );
        if (existing.length >= MAX_ANTHROPIC_BREAKPOINTS) expect(plan).toEqual([]);
        expect(inOrder([...existing, ...plan])).toBe(true);
        for (const marker of plan) {
          expect(existing.some((other) => comparePositions(other.position, marker.position) === 0)).toBe(
            false,
          );
          expect(tokensThrough(marker.position)).toBeGreaterThanOrEqual(s.minTokens);
          if (marker.position.at === "message") {
            expect(marker.position.index).toBeLessThan(s.messageCount - s.ephemeralTail);
          }
          if (marker.position.at === "tools") expect(s.hasTools).toBe(true);
          if (marker.position.at === "system") expect(s.hasSystem).toBe(true);
        }
        const sortedPlan = [...plan].sort((a, b) => comparePositions(a.position, b.position));
        expect(plan).toEqual(sortedPlan);
      }),
      { numRuns: 500 },
    );
  });
});
