import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SubstringSet } from "./substring-set.ts";

describe("SubstringSet", () => {
  it("scans exactly the keys still in the set that `includes` finds from the start position (property)", () => {
    const alphabet = fc.constantFrom("a", "b", "/", ".");
    const word = fc.string({ unit: alphabet, minLength: 1, maxLength: 10 });
    fc.assert(
      fc.property(
        fc.string({ unit: alphabet, maxLength: 300 }),
        fc.uniqueArray(word, { maxLength: 40 }),
        fc.array(fc.nat(39), { maxLength: 10 }),
        fc.nat(300),
        (text, keys, deleted, from) => {
          const set = new SubstringSet(keys);
          const removed = new Set(deleted.map((index) => keys[index]).filter((key) => key !== undefined));
          for (const key of removed) set.delete(key);
          expect(set.size).toBe(keys.length - removed.size);
          const found = new Set<string>();
          set.scan(text, from, (key) => found.add(key));
          const expected = keys.filter((key) => !removed.has(key) && text.includes(key, from));
          expect([...found].sort()).toEqual(expected.sort());
        },
      ),
    );
  });

  it("reports every occurrence and keys that share a prefix", () => {
    const set = new SubstringSet(["src/a.ts", "src/a.tsx", "src/"]);
    const found: string[] = [];
    set.scan("src/a.tsx src/a.ts", 0, (key) => found.push(key));
    expect(found.sort()).toEqual(["src/", "src/", "src/a.ts", "src/a.ts", "src/a.tsx"]);
  });
});
