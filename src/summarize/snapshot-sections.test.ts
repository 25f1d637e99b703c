import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  parseSnapshot,
  renderSnapshot,
  SNAPSHOT_HEADINGS,
  type SnapshotSection,
  type SnapshotSectionKey,
} from "./snapshot-sections.ts";

describe("snapshot sections", () => {
  it("renders headings in the given order and skips empty sections", () => {
    const text = renderSnapshot(
      [
        { key: "goal", items: ["Fix the parser.\n\nKeep the API."] },
        { key: "files", items: [] },
        { key: "next", items: ["[ ] run tests"] },
      ],
      "_Omitted to fit the budget: 2 actions._",
    );
    expect(text).toBe(
      "## Goal & instructions\n- Fix the parser.\n  \n  Keep the API.\n\n## Next steps\n- [ ] run tests\n\n" +
        "_Omitted to fit the budget: 2 actions._",
    );
  });

  it("parses what it renders, item for item (property)", () => {
    const keys = Object.keys(SNAPSHOT_HEADINGS).filter((key) => key !== "earlier") as SnapshotSectionKey[];
    const line = fc.stringMatching(/^[a-z0-9#*./()-][a-z0-9 #*./()-]{0,30}$/);
    const item = fc
      .array(fc.oneof(line, fc.constant("")), { minLength: 1, maxLength: 4 })
      .filter((lines) => lines[0] !== "")
      .map((lines) => lines.join("\n").trimEnd());
    const sections = fc.uniqueArray(
      fc.record({ key: fc.constantFrom(...keys), items: fc.array(item, { minLength: 1, maxLength: 4 }) }),
      { selector: (section) => section.key, maxLength: keys.length },
    );
    fc.assert(
      fc.property(sections, (generated: SnapshotSection[]) => {
        const parsed = parseSnapshot(renderSnapshot(generated, "_Omitted to fit the budget: 1 files._"));
        expect([...parsed.keys()].sort()).toEqual(generated.map((section) => section.key).sort());
        for (const section of generated) expect(parsed.get(section.key)).toEqual(section.items);
      }),
    );
  });

  it("keeps foreign text line by line under earlier, unknown headings included", () => {
    const parsed = parseSnapshot(
      "Summary of the work so far.\n### Key facts\n- the API is frozen\n## Files\n* src/a.ts\nsome prose",
    );
    expect(parsed.get("earlier")).toEqual(["Summary of the work so far.", "Key facts:", "the API is frozen"]);
    expect(parsed.get("files")).toEqual(["src/a.ts", "some prose"]);
  });
});
