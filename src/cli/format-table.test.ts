import { describe, expect, it } from "vitest";
import { formatTable } from "./format-table.ts";

describe("formatTable", () => {
  it("right-aligns a column of numbers, also where a dash stands for a missing one", () => {
    const table = formatTable(
      ["", "recorded"],
      [
        ["input tokens", 12_098_281],
        ["largest request", "—"],
      ],
    );
    expect(table.split("\n")).toEqual([
      "                   recorded",
      "---------------  ----------",
      "input tokens     12,098,281",
      "largest request           —",
    ]);
  });

  it("left-aligns a column of words", () => {
    expect(formatTable(["name"], [["a"], ["bb"]]).split("\n")).toEqual(["name", "----", "a", "bb"]);
  });
});
