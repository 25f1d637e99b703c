// Importing a transcript holds a bounded number of copies of its largest message: the whole text is parsed,
// stored and indexed, but never split into characters or joined into other message-sized strings.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const worker = fileURLToPath(new URL("./workers/cli-peak-rss.ts", import.meta.url));
const folder = mkdtempSync(join(tmpdir(), "ctxkit-import-memory-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** A ctxkit JSONL transcript whose first prompt is `size` characters of prose. */
function transcript(name: string, size: number): string {
  const text = "lorem ipsum dolor sit amet ".repeat(Math.ceil(size / 27)).slice(0, size);
  const message = (seq: number, role: string, body: string) =>
    JSON.stringify({
      type: "message",
      id: `m${seq}`,
      sessionId: name,
      seq,
      turn: 1,
      role,
      content: [{ type: "text", text: body }],
      createdAt: `2025-01-01T00:00:0${seq}.000Z`,
    });
  const path = join(folder, `${name}.jsonl`);
  writeFileSync(
    path,
    [
      JSON.stringify({ type: "ctxkit", version: 1 }),
      message(0, "user", text),
      message(1, "assistant", "ok"),
      "",
    ].join("\n"),
  );
  return path;
}

/** Peak resident memory (bytes) of a CLI process importing `file` into a new database. */
async function peakImportMemory(file: string): Promise<number> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [worker, "import", file, "--db", join(folder, `${Math.random()}.db`), "--json"],
    { env: { ...process.env, HOME: folder }, maxBuffer: 1 << 20 },
  );
  const peak = /peak-rss-kib (\d+)\s*$/.exec(stdout);
  if (!peak) throw new Error(`no peak memory in ${stdout}`);
  return Number(peak[1]) * 1024;
}

describe("import memory", () => {
  it("stays within 8× the largest message above the memory of a tiny import", async () => {
    const size = 24 * 1024 * 1024;
    const tiny = await peakImportMemory(transcript("tiny", 10));
    const huge = await peakImportMemory(transcript("huge", size));
    expect(huge - tiny).toBeLessThanOrEqual(8 * size);
  });
});
