import { describe, expect, it } from "vitest";
import { eventSummary } from "./event-words.ts";
import { summaryExcerpt } from "./summary-excerpt.ts";

describe("summaryExcerpt", () => {
  it("shows the goal and the work before the files, and counts the files instead of listing them all", () => {
    const summary = [
      "## Files",
      "- src/a.ts",
      "- src/b.ts",
      "- src/c.ts",
      "- src/d.ts",
      "",
      "## Goal & instructions",
      "- Fix the parser",
      "- Keep the API",
      "",
      "## Changes",
      "- edit_file(src/a.ts): guard the empty line",
    ].join("\n");
    expect(summaryExcerpt(summary)).toEqual([
      "Goal & instructions: Fix the parser (+1 more)",
      "Changes: edit_file(src/a.ts): guard the empty line",
      "Files (4): src/a.ts, src/b.ts, src/c.ts, …",
    ]);
  });

  it("stops at the number of lines asked for", () => {
    const summary = ["## Goal & instructions", "- g", "## Decisions", "- d", "## Next steps", "- n"].join(
      "\n",
    );
    expect(summaryExcerpt(summary, 2)).toEqual(["Goal & instructions: g", "Decisions: d"]);
  });
});

describe("eventSummary", () => {
  it("says what governance did in words, compactions first, without the quiet events", () => {
    expect(
      eventSummary({
        "tool-output-offloaded": 3,
        "compaction-start": 2,
        "compaction-end": 2,
        "checkpoint-skipped": 9,
      }),
    ).toBe(
      "2 compactions (older work summarised, originals kept in the store); 3 times large tool outputs were set " +
        "aside (a preview stays; the agent can read them back)",
    );
    expect(eventSummary({ "compaction-end": 1 })).toBe(
      "1 compaction (older work summarised, originals kept in the store)",
    );
    expect(eventSummary({})).toBe("nothing needed changing");
  });
});
