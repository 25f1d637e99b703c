import { describe, expect, it } from "vitest";
import { TimelineCache } from "./timeline-cache.ts";

describe("TimelineCache", () => {
  const built = (characters: number, value: string) => async () => ({ timeline: value, characters });

  it("serves a timeline while its version holds, and rebuilds it when the session changed", async () => {
    const cache = new TimelineCache<string>(1_000);
    let builds = 0;
    const build = (value: string) => async () => ({ timeline: `${value}#${++builds}`, characters: 10 });
    expect(await cache.get("a", "v1", build("a"))).toBe("a#1");
    expect(await cache.get("a", "v1", build("a"))).toBe("a#1");
    expect(await cache.get("a", "v2", build("a"))).toBe("a#2");
  });

  it("keeps no more stored text than its budget, the newest timeline always", async () => {
    const cache = new TimelineCache<string>(100);
    await cache.get("a", "v", built(40, "a"));
    await cache.get("b", "v", built(30, "b"));
    // 70 characters: both kept; a is now the most recently used.
    expect(await cache.get("a", "v", built(40, "a rebuilt"))).toBe("a");
    // c makes 120: the least recently used (b) goes, a (40) and c (50) stay.
    await cache.get("c", "v", built(50, "c"));
    expect(await cache.get("a", "v", built(40, "a rebuilt"))).toBe("a");
    expect(await cache.get("c", "v", built(50, "c rebuilt"))).toBe("c");
    expect(await cache.get("b", "v", built(30, "b rebuilt"))).toBe("b rebuilt");
    // One timeline over the whole budget is still kept, alone.
    await cache.get("huge", "v", built(500, "huge"));
    expect(await cache.get("huge", "v", built(500, "huge rebuilt"))).toBe("huge");
    expect(await cache.get("c", "v", built(50, "c again"))).toBe("c again");
  });

  it("forgets a build that failed", async () => {
    const cache = new TimelineCache<string>(100);
    await expect(
      cache.get("a", "v", async () => {
        throw new Error("too large");
      }),
    ).rejects.toThrow("too large");
    expect(await cache.get("a", "v", built(10, "a"))).toBe("a");
  });
});
