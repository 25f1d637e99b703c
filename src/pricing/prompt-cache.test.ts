import { describe, expect, it } from "vitest";
import { cacheProfiles } from "./cache-profile.ts";
import { fixedSegment } from "./payload-segments.ts";
import { PromptCache, type PayloadSegment } from "./prompt-cache.ts";

describe("PromptCache", () => {
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
