import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { batchedLines } from "./batched-lines.ts";

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe("batchedLines", () => {
  it("writes the lines of one event-loop turn in one write, in order, and nothing before the turn ends", async () => {
    const writes: string[] = [];
    const log = batchedLines((text) => writes.push(text));
    log("a");
    log("b");
    expect(writes).toEqual([]);
    await nextTurn();
    log("c");
    await nextTurn();
    expect(writes).toEqual(["a\nb\n", "c\n"]);
  });

  it("loses and reorders no line, however they are spread over turns", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.string({ maxLength: 5 }), { maxLength: 4 }), { maxLength: 6 }),
        async (turns) => {
          const writes: string[] = [];
          const log = batchedLines((text) => writes.push(text));
          for (const lines of turns) {
            for (const line of lines) log(line);
            await nextTurn();
          }
          expect(writes.join("")).toBe(
            turns
              .flat()
              .map((line) => `${line}\n`)
              .join(""),
          );
          expect(writes.length).toBe(turns.filter((lines) => lines.length > 0).length);
        },
      ),
    );
  });
});
