import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CtxkitError } from "../errors/index.ts";
import { DailyFileSink } from "./daily-file-sink.ts";
import type { Memory } from "./memory-store.ts";

const root = mkdtempSync(join(tmpdir(), "ctxkit-daily-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let folders = 0;
const freshDir = () => join(root, `case-${++folders}`);

function memory(fields: Partial<Memory> & Pick<Memory, "content">): Memory {
  return {
    id: "mem_1",
    owner: "local",
    kind: "session-summary",
    scope: "user",
    createdAt: "2025-03-01T00:00:00.000Z",
    updatedAt: "2025-03-01T00:00:00.000Z",
    metadata: {},
    ...fields,
  };
}

describe("DailyFileSink", () => {
  it("writes a titled file per day with one heading per entry", async () => {
    const dir = freshDir();
    let now = new Date("2025-03-01T14:03:12.000Z");
    const sink = new DailyFileSink({ dir, timeZone: "utc", clock: () => now });
    const path = await sink.append(
      memory({ content: "Fixed the login bug.\nNext: write tests.\n", sourceSessionId: "s1" }),
    );
    expect(path).toBe(join(dir, "memory", "2025-03-01.md"));
    now = new Date("2025-03-01T18:00:00.000Z");
    await sink.append(memory({ kind: "preference", content: "Prefers tabs" }));
    expect(readFileSync(path, "utf8")).toBe(
      [
        "# Memory 2025-03-01",
        "",
        "## 14:03:12 · session-summary · session s1",
        "",
        "Fixed the login bug.",
        "Next: write tests.",
        "",
        "## 18:00:00 · preference",
        "",
        "Prefers tabs",
        "",
        "",
      ].join("\n"),
    );
    now = new Date("2025-03-02T00:00:01.000Z");
    const next = await sink.append(memory({ content: "Next day" }));
    expect(next).toBe(join(dir, "memory", "2025-03-02.md"));
    expect(readFileSync(next, "utf8")).toBe(
      "# Memory 2025-03-02\n\n## 00:00:01 · session-summary\n\nNext day\n\n",
    );
    expect(readdirSync(join(dir, "memory")).sort()).toEqual(["2025-03-01.md", "2025-03-02.md"]);
  });

  it("names the day in local time by default", async () => {
    const now = new Date("2025-06-15T23:30:00.000Z");
    const sink = new DailyFileSink({ dir: freshDir(), clock: () => now });
    const local = `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, "0")}-${String(now.getDate()).padStart(2, "0")}`;
    expect(await sink.append(memory({ content: "x" }))).toMatch(new RegExp(`${local}\\.md$`));
  });

  it("never interleaves or loses entries appended at once by several writers", async () => {
    const dir = freshDir();
    const clock = () => new Date("2025-03-01T10:00:00.000Z");
    const sinks = [0, 1, 2].map(() => new DailyFileSink({ dir, timeZone: "utc", clock }));
    const bodies = Array.from(
      { length: 60 },
      (_, index) => `entry-${index} ${"x".repeat(20_000)} end-${index}`,
    );
    await Promise.all(bodies.map((content, index) => sinks[index % 3]!.append(memory({ content }))));
    const text = readFileSync(join(dir, "memory", "2025-03-01.md"), "utf8");
    expect(text.startsWith("# Memory 2025-03-01\n\n")).toBe(true);
    expect(text.split("# Memory").length - 1).toBe(1);
    const entries = text.split("## 10:00:00 · session-summary\n\n").slice(1);
    expect(entries.length).toBe(60);
    for (const entry of entries) expect(entry).toMatch(/^entry-(\d+) x{20000} end-\1\n\n$/);
    expect(readdirSync(join(dir, "memory"))).toEqual(["2025-03-01.md"]);
  });

  it("reports an unwritable location with a typed error", async () => {
    const blocker = join(freshDir());
    writeFileSync(blocker, "a file where the folder should be");
    const sink = new DailyFileSink({ dir: blocker });
    const error = await sink.append(memory({ content: "x" })).catch((caught: unknown) => caught);
    expect(CtxkitError.isInstance(error) && error.code).toBe("store_error");
  });
});
