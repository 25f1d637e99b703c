import { describe, expect, it } from "vitest";
import * as memory from "./index.ts";

describe("ctxkit memory barrel", () => {
  it("exports the public API", () => {
    expect(typeof memory.InMemoryMemoryStore).toBe("function");
    expect(typeof memory.CoreMemoryBuilder).toBe("function");
    expect(typeof memory.DailyFileSink).toBe("function");
    expect(memory.MEMORY_KINDS).toEqual(["session-summary", "fact", "preference", "note"]);
  });
});
