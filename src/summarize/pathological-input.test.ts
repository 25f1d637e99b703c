// Text an agent or a model sends can be adversarial: each parser on the request path must stay linear in it.
// These inputs took seconds (4,000 characters) and would take hours (20,000+) through backtracking regexes;
// linear parsers finish them at once, so a regression shows as a test timeout, not as a timing assertion.
import { describe, expect, it } from "vitest";
import { filePathsIn } from "../metrics/fact-patterns.ts";
import { unwrapSnapshot } from "./llm-summarizer.ts";
import { planFromText } from "./plan-state.ts";
import { parseSnapshot } from "./snapshot-sections.ts";

const RUN = 200_000;

describe("parsers stay linear on long runs", () => {
  it("unwraps a <summary> answer padded with a long whitespace run", () => {
    expect(unwrapSnapshot(`<summary>${" ".repeat(RUN)}x</summary>`)).toBe("x");
    expect(unwrapSnapshot(`<summary>${" ".repeat(RUN)}x`)).toBe(`<summary>${" ".repeat(RUN)}x`);
  });

  it("reads headings followed by a long whitespace run", () => {
    expect(parseSnapshot(`## Files${" ".repeat(RUN)}\n- src/a.ts`).get("files")).toEqual(["src/a.ts"]);
    expect(parseSnapshot(`## Files ##${" ".repeat(RUN)}\n- src/b.ts`).get("files")).toEqual(["src/b.ts"]);
    expect(parseSnapshot(`# Open problems${" ".repeat(RUN)}b\n- first`).get("files")).toBeUndefined();
  });

  it("reads a checklist whose item ends in a long whitespace run", () => {
    const plan = planFromText(`- [x] first${" ".repeat(RUN)}\n- [ ] second ${" ".repeat(RUN)}tail`);
    expect(plan?.map((item) => item.status)).toEqual(["done", "pending"]);
    expect(plan?.[0]?.text).toBe("first");
  });

  it("skips path-like tokens far too long to be paths", () => {
    expect(filePathsIn(`${".".repeat(RUN)}a and ${":1".repeat(RUN / 2)} and src/a.ts:12`)).toEqual([
      "src/a.ts",
    ]);
  });
});
