import { randomUUID } from "node:crypto";
import { access, link, open, rm } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { StoreError } from "../errors/errors.ts";
import { systemClock, type Clock } from "../model/ids.ts";
import { validate } from "../model/schemas.ts";
import type { Memory } from "./memory-store.ts";
import { ensureDirectory } from "../errors/ensure-directory.ts";

/** Options of `DailyFileSink`. */
export interface DailyFileSinkOptions {
  /** The files go to `<dir>/memory/YYYY-MM-DD.md`. */
  readonly dir: string;
  /** Which calendar names the day and the time of an entry (default `local`). */
  readonly timeZone?: "local" | "utc";
  readonly clock?: Clock;
}

const optionsSchema = z.object({
  dir: z.string().min(1, "dir must name a folder"),
  timeZone: z.enum(["local", "utc"]).optional(),
});

/** The day (`YYYY-MM-DD`) and the time (`HH:MM:SS`) of `time` in the chosen calendar. */
function parts(time: Date, timeZone: "local" | "utc"): { day: string; time: string } {
  const shift = timeZone === "utc" ? 0 : time.getTimezoneOffset() * 60_000;
  const iso = new Date(time.getTime() - shift).toISOString();
  return { day: iso.slice(0, 10), time: iso.slice(11, 19) };
}

/**
 * One memory as a Markdown entry: a heading with the time, the kind and the source session, then the content.
 *
 * @example
 * dailyEntry(memory, "14:03:12"); // "## 14:03:12 · session-summary · session s1\n\n…\n\n"
 */
export function dailyEntry(memory: Memory, time: string): string {
  const heading = [
    time,
    memory.kind,
    ...(memory.sourceSessionId ? [`session ${memory.sourceSessionId}`] : []),
  ];
  return `## ${heading.join(" · ")}\n\n${memory.content.trim()}\n\n`;
}

/**
 * A human-readable log of memories, one Markdown file per day (`<dir>/memory/YYYY-MM-DD.md`, the CowAgent
 * seed's daily memory file). Each entry is written with one append, so entries from several processes never
 * interleave, and appends of this process are queued per file.
 *
 * @example
 * const sink = new DailyFileSink({ dir: process.cwd() });
 * await sink.append(memory); // → ./memory/2025-03-01.md
 */
export class DailyFileSink {
  readonly #folder: string;
  readonly #timeZone: "local" | "utc";
  readonly #clock: Clock;
  readonly #queues = new Map<string, Promise<unknown>>();

  constructor(options: DailyFileSinkOptions) {
    const checked = validate(optionsSchema, options, "daily file options");
    this.#folder = join(checked.dir, "memory");
    this.#timeZone = checked.timeZone ?? "local";
    this.#clock = options.clock ?? systemClock;
  }

  /** The file of the day `time` falls on. */
  pathFor(time: Date): string {
    return join(this.#folder, `${parts(time, this.#timeZone).day}.md`);
  }

  /** Appends `memory` to today's file (created with a title when missing); returns the file's path. */
  async append(memory: Memory): Promise<string> {
    const now = this.#clock();
    const { day, time } = parts(now, this.#timeZone);
    const path = this.pathFor(now);
    const previous = this.#queues.get(path) ?? Promise.resolve();
    const done = previous
      .catch(() => {})
      .then(() => this.#write(path, `# Memory ${day}\n\n`, dailyEntry(memory, time)));
    this.#queues.set(path, done);
    try {
      await done;
    } finally {
      if (this.#queues.get(path) === done) this.#queues.delete(path);
    }
    return path;
  }

  async #write(path: string, title: string, entry: string): Promise<void> {
    try {
      ensureDirectory(this.#folder);
      await createWithTitle(path, title);
      await writeOnce(path, "a", entry);
    } catch (error) {
      throw new StoreError(
        `${path}: cannot append to the daily memory file (${(error as Error).message}); check that the folder is writable`,
        true,
        { cause: error },
      );
    }
  }
}

/**
 * Creates `path` holding `title` unless it exists, atomically: the title is written to a temporary file that is
 * then hard-linked into place (linking fails when another writer created the file first).
 */
async function createWithTitle(path: string, title: string): Promise<void> {
  const exists = await access(path).then(
    () => true,
    () => false,
  );
  if (exists) return;
  const temporary = `${path}.${process.pid}.${randomUUID()}.tmp`;
  await writeOnce(temporary, "wx", title);
  try {
    await link(temporary, path);
  } catch (error) {
    if ((error as { code?: unknown }).code !== "EEXIST") throw error;
  } finally {
    await rm(temporary, { force: true });
  }
}

/** Writes `text` with one `write` call on a file opened with `flags` (`a` appends at the end atomically). */
async function writeOnce(path: string, flags: string, text: string): Promise<void> {
  const handle = await open(path, flags);
  try {
    const bytes = Buffer.from(text, "utf8");
    let written = 0;
    while (written < bytes.length) {
      written += (await handle.write(bytes, written)).bytesWritten;
    }
  } finally {
    await handle.close();
  }
}
