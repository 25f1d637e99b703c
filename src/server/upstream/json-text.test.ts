import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bodyChunks, JsonText } from "./json-text.ts";

/** A body as a proxy sends it: JSON fields, and top-level arrays some of whose items are pre-serialised. */
const body = fc
  .dictionary(
    fc.string({ maxLength: 8 }),
    fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.array(fc.tuple(fc.jsonValue({ maxDepth: 3 }), fc.boolean()), { maxLength: 6 }),
    ),
    { maxKeys: 5 },
  )
  .map((fields) => {
    const plain: Record<string, unknown> = {};
    const pieces: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(fields)) {
      const isPieces =
        Array.isArray(value) && value.every((item) => Array.isArray(item) && item.length === 2);
      plain[key] = isPieces ? (value as [unknown, boolean][]).map(([item]) => item) : value;
      pieces[key] = isPieces
        ? (value as [unknown, boolean][]).map(([item, serialised]) =>
            serialised ? new JsonText(JSON.stringify(item)) : item,
          )
        : value;
    }
    return { plain, pieces };
  });

describe("bodyChunks", () => {
  it("writes the bytes JSON.stringify writes for the same values", () => {
    fc.assert(
      fc.property(body, ({ plain, pieces }) => {
        const expected = JSON.stringify(plain);
        expect(Buffer.concat(bodyChunks(pieces)).toString()).toBe(expected);
        // A plain JSON.stringify of a body holding pieces agrees too (toJSON).
        expect(JSON.stringify(pieces)).toBe(expected);
      }),
    );
  });

  it("leaves out undefined fields and writes undefined items as null, as JSON.stringify does", () => {
    const value = { a: undefined, messages: [new JsonText('{"x":1}'), undefined], b: 2 };
    expect(Buffer.concat(bodyChunks(value)).toString()).toBe('{"messages":[{"x":1},null],"b":2}');
  });

  it("throws JSON.stringify's RangeError for a value nested too deeply", () => {
    let deep: unknown = [];
    for (let depth = 0; depth < 20_000; depth++) deep = [deep];
    expect(() => bodyChunks({ messages: [new JsonText("{}")], tools: deep })).toThrow(RangeError);
  });
});
