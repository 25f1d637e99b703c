import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../errors/errors.ts";
import { jsonValueSchema, MAX_JSON_DEPTH, storedNameSchema, validate } from "./schemas.ts";

const nested = (depth: number): unknown => {
  let value: unknown = "leaf";
  for (let level = 0; level < depth; level++) value = level % 2 === 0 ? [value] : { next: value };
  return value;
};

const problem = (value: unknown) => {
  try {
    validate(jsonValueSchema, value, "value");
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).message;
  }
};

describe("jsonValueSchema", () => {
  it("accepts every JSON value, as given", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(validate(jsonValueSchema, value, "value")).toBe(value);
      }),
      { numRuns: 500 },
    );
  });

  it("refuses what JSON.stringify cannot write back: too deep, cyclic, not JSON", () => {
    expect(problem(nested(MAX_JSON_DEPTH))).toBeUndefined();
    expect(JSON.stringify(nested(MAX_JSON_DEPTH))).toContain("leaf");
    expect(problem(nested(MAX_JSON_DEPTH + 1))).toMatch(/deeper than 1000 levels/);
    expect(problem(nested(200_000))).toMatch(/deeper than 1000 levels/);

    const cyclic: { name: string; self?: unknown } = { name: "a" };
    cyclic.self = { again: [cyclic] };
    expect(problem(cyclic)).toMatch(/self\.again\.0.*must not contain itself/);
    // Shared, not cyclic: written out twice, which is JSON.
    const shared = { text: "x" };
    expect(problem({ first: shared, second: [shared] })).toBeUndefined();

    expect(problem({ n: Number.NaN })).toMatch(/finite number/);
    expect(problem({ when: new Date() })).toMatch(/class instance/);
  });
});

describe("storedNameSchema", () => {
  it("takes any non-empty text without U+0000", () => {
    expect(storedNameSchema.safeParse("会话 1\n").success).toBe(true);
    expect(storedNameSchema.safeParse("").success).toBe(false);
    expect(storedNameSchema.safeParse("a\u0000b").success).toBe(false);
  });
});
