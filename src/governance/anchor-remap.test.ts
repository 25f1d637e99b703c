import { describe, expect, it } from "vitest";
import { repairOrphans } from "../conversation/orphan-repair.ts";
import { HistoryBuilder } from "../test/history-builder.ts";
import { remapAnchors } from "./anchor-remap.ts";

describe("remapAnchors", () => {
  const view = new HistoryBuilder()
    .user("Fix the failing test")
    .step([{ name: "read_file", input: { path: "a.ts" }, output: "const a = 1;" }])
    .step([{ name: "read_file", input: { path: "b.ts" }, output: "const b = 2;" }])
    .build();

  it("keeps each anchor on its message when messages before it are left out or inserted", () => {
    const system = { ...view[0]!, id: "sys", role: "system" as const };
    const withSystem = [system, ...view];
    // view[2] is the first tool result; in the list with a system message first it is at 3.
    expect(remapAnchors([3], withSystem, view)).toEqual([2]);
    const inserted = [view[0]!, { ...view[0]!, id: "extra" }, ...view.slice(1)];
    expect(remapAnchors([2], view, inserted)).toEqual([3]);
  });

  it("falls back to the nearest earlier message the new list holds, and drops an anchor with none", () => {
    const without = view.filter((_, index) => index !== 2);
    expect(remapAnchors([2], view, without)).toEqual([1]);
    expect(remapAnchors([0], view, view.slice(1))).toEqual([]);
    expect(remapAnchors([1, 2], view, without)).toEqual([1]);
  });

  it("moves an anchor through orphan repair (an interrupted call's result inserted before it)", () => {
    const interrupted = new HistoryBuilder()
      .user("Fix the failing test")
      .message({
        role: "assistant",
        content: [{ type: "tool-call", id: "z", name: "bash", input: { cmd: "npm test" } }],
      })
      .user("sorry, interrupted; go on")
      .step([{ name: "read_file", input: { path: "a.ts" }, output: "const a = 1;" }])
      .build();
    const repaired = repairOrphans(interrupted).messages;
    expect(repaired.length).toBe(interrupted.length + 1);
    const anchor = interrupted.findIndex(
      (message) => message.role === "assistant" && message !== interrupted[1],
    );
    const [moved] = remapAnchors([anchor], interrupted, repaired);
    expect(repaired[moved!]).toBe(interrupted[anchor]);
  });
});
