import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { findSubstrings } from "./find-substrings.ts";

describe("findSubstrings", () => {
  it("finds exactly the keys that `includes` finds from the start position (property)", () => {
    const alphabet = fc.constantFrom("a", "b", "c", "/", ".", " ");
    const word = fc.string({ unit: alphabet, minLength: 1, maxLength: 7 });
    fc.assert(
      fc.property(
        fc.string({ unit: alphabet, maxLength: 400 }),
        fc.uniqueArray(word, { maxLength: 60 }),
        fc.nat(400),
        (text, keys, from) => {
          const expected = keys.filter((key) => text.includes(key, from));
          expect([...findSubstrings(text, from, keys)].sort()).toEqual(expected.sort());
        },
      ),
    );
  });

  it("reports each key once even when it occurs many times", () => {
    const keys = Array.from({ length: 20 }, (_, index) => `src/file${index}.ts`);
    const text = `${keys[3]} ${keys[3]} ${keys[17]}`.repeat(5);
    expect([...findSubstrings(text, 0, keys)].sort()).toEqual([keys[17], keys[3]].sort());
  });
});
