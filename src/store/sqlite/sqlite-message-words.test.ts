import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, describe, expect, it } from "vitest";
import type { MessageInput } from "../../model/message.ts";
import { openSqliteSessionStore } from "./open-sqlite-session-store.ts";
import type { SqliteSessionStore } from "./sqlite-session-store.ts";
import { WORDS_BATCH } from "../sql/words-drain.ts";

const folder = mkdtempSync(join(tmpdir(), "ctxkit-sqlite-words-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
let files = 0;
const freshPath = () => join(folder, `db-${++files}.db`);

const turn = (text: string): MessageInput[] => [
  { role: "user", content: [{ type: "text", text }] },
  { role: "assistant", content: [{ type: "text", text: `noted ${text}` }] },
];

/** The mark of indexed rows and the newest row id. */
function mark(store: SqliteSessionStore): { indexed: number; last: number } {
  const row = store.database.connection
    .prepare(
      "SELECT indexed_to AS indexed, (SELECT coalesce(max(row_id), 0) FROM messages) AS last FROM message_words_state",
    )
    .get() as { indexed: number; last: number };
  return { ...row };
}

const found = async (store: SqliteSessionStore, query: string) =>
  (await store.searchSessions(query, { limit: 100 })).map((hit) => `${hit.session.id}@${hit.seq}`).sort();

describe("SQLite message words, indexed after their turns", () => {
  it("finds rows whether they are indexed yet or still waiting, and indexes a batch before the next write", async () => {
    const store = await openSqliteSessionStore({ path: freshPath(), retentionDays: 0 });
    await store.appendTurn("a", turn("alpha zebra"));
    await store.appendTurn("b", turn("beta zebra"));
    // Two turns wait: search reads them itself.
    expect(mark(store)).toEqual({ indexed: 0, last: 4 });
    expect(await found(store, "zebra")).toEqual(["a@0", "b@0"]);
    expect(await found(store, "noted beta")).toEqual(["b@1"]);
    // Fill a batch: the turn's own transaction indexes nothing; the next write drains first, apart.
    let index = 0;
    while (mark(store).last < WORDS_BATCH) await store.appendTurn("c", turn(`filler ${index++}`));
    expect(mark(store).indexed).toBe(0);
    await store.appendTurn("c", turn(`filler ${index}`));
    const { indexed, last } = mark(store);
    expect(indexed).toBe(last - 2);
    await store.appendTurn("d", turn("delta zebra"));
    expect(mark(store).indexed).toBe(indexed);
    // Indexed rows (a, b) and a waiting one (d) together, each session with its first matching message.
    expect(await found(store, "zebra")).toEqual(["a@0", "b@0", "d@0"]);
    expect(await found(store, "filler 7")).toEqual(["c@14"]);
    expect(await found(store, "absent")).toEqual([]);
    await store.close();
  });

  it("drops a deleted session's words and indexes the row ids SQLite hands out again", async () => {
    const store = await openSqliteSessionStore({ path: freshPath(), retentionDays: 0 });
    await store.appendTurn("old", turn("keeper words"));
    for (let index = 0; index < 10; index++) await store.appendTurn("newest", turn(`gone ${index}`));
    await store.flushSearchIndex();
    const before = mark(store);
    expect(before.indexed).toBe(before.last);
    // The newest rows go: their ids will be handed out again, so the mark comes back below them.
    expect(await store.deleteSession("newest")).toBe(true);
    expect(mark(store)).toEqual({ indexed: 2, last: 2 });
    expect(await found(store, "gone")).toEqual([]);
    await store.appendTurn("reused", turn("gone again"));
    expect(mark(store).last).toBe(4);
    expect(await found(store, "gone")).toEqual(["reused@0"]);
    for (let index = 0; index < 5; index++) await store.appendTurn("reused", turn(`more ${index}`));
    await store.flushSearchIndex();
    expect(mark(store)).toEqual({ indexed: 14, last: 14 });
    expect(await found(store, "gone")).toEqual(["reused@0"]);
    expect(await found(store, "keeper")).toEqual(["old@0"]);
    await store.close();
  });

  it("is read by a read-only store, waiting rows included", async () => {
    const path = freshPath();
    const writer = await openSqliteSessionStore({ path, retentionDays: 0 });
    await writer.appendTurn("a", turn("quokka"));
    const reader = await openSqliteSessionStore({ path, readOnly: true, retentionDays: 0 });
    expect(await found(reader, "quokka")).toEqual(["a@0"]);
    await reader.close();
    await writer.close();
  });
});

describe("SQLite message words left waiting", () => {
  it("are indexed with no further write, by the inline writer and by the writer thread", async () => {
    for (const writer of ["inline", "worker"] as const) {
      const path = freshPath();
      const store = await openSqliteSessionStore({ path, retentionDays: 0, writer });
      await store.appendTurn("a", turn("walrus"));
      const reader = await openSqliteSessionStore({ path, readOnly: true, retentionDays: 0 });
      // The drain's timer indexes them in the background (WORDS_DELAY_MS); search finds them all along.
      expect(await found(reader, "walrus")).toEqual(["a@0"]);
      await expect.poll(() => mark(reader), { timeout: 10_000 }).toEqual({ indexed: 2, last: 2 });
      expect(await found(reader, "walrus")).toEqual(["a@0"]);
      await reader.close();
      await store.close();
    }
  });

  it("are indexed at the next open when a process left them (killed before its drain)", async () => {
    const path = freshPath();
    const store = await openSqliteSessionStore({ path, retentionDays: 0 });
    for (let index = 0; index < 3; index++) await store.appendTurn("a", turn(`heron ${index}`));
    await store.close();
    // As a process killed between its commits and its drain leaves the file: rows past the mark, no words.
    const file = new DatabaseSync(path);
    file.exec("DELETE FROM message_words; UPDATE message_words_state SET indexed_to = 0");
    file.close();
    const reopened = await openSqliteSessionStore({ path, retentionDays: 0 });
    expect(await found(reopened, "heron 1")).toEqual(["a@2"]);
    await expect.poll(() => mark(reopened), { timeout: 10_000 }).toEqual({ indexed: 6, last: 6 });
    const indexed = reopened.database.connection
      .prepare("SELECT count(*) AS count FROM message_words WHERE message_words MATCH 'heron'")
      .get() as { count: number };
    expect(indexed.count).toBe(6);
    await reopened.close();
  });
});

describe("SQLite message words under random writes", () => {
  it("finds exactly what a scan of every stored row finds, across batches, deletes, forks, restores and compactions", async () => {
    const { normalizeSearchText, searchTextOf } = await import("../search-text.ts");
    const store = await openSqliteSessionStore({ path: freshPath(), retentionDays: 0 });
    const words = ["apple", "bravo", "cedar", "delta", "ember", "fjord", "gamma", "harbor"];
    let seed = 7;
    const random = (below: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % below;
    };
    const text = () => [0, 1, 2].map(() => words[random(words.length)]).join(" ");
    const live = new Set<string>();
    let forks = 0;

    const expected = async (terms: readonly string[]) => {
      const hits: string[] = [];
      for (const id of live) {
        const dump = await store.dumpSession(id);
        const seqs = dump.rows
          .filter(({ message }) => {
            const held = new Set(searchTextOf(message).split(" "));
            return terms.every((term) => held.has(term));
          })
          .map(({ message }) => message.seq);
        const title = new Set(normalizeSearchText(dump.session.title ?? "").split(" "));
        if (seqs.length > 0) hits.push(`${id}@${Math.min(...seqs)}`);
        else if (terms.every((term) => title.has(term))) hits.push(`${id}@undefined`);
      }
      return hits.sort();
    };
    const check = async () => {
      for (const query of [...words, "apple bravo", "cedar noted", "ember fjord gamma"]) {
        expect(await found(store, query), query).toEqual(
          await expected(normalizeSearchText(query).split(" ")),
        );
      }
    };

    for (let step = 0; step < 700; step++) {
      const ids = [...live];
      const pick = ids[random(Math.max(ids.length, 1))];
      const roll = random(100);
      if (pick === undefined || roll < 75) {
        const id = `s${random(6)}`;
        await store.appendTurn(id, turn(text()));
        live.add(id);
      } else if (roll < 80) {
        await store.deleteSession(pick);
        live.delete(pick);
      } else if (roll < 85) {
        const record = (await store.getSession(pick))!;
        const id = `f${++forks}`;
        await store.forkSession(pick, { id, atSeq: record.nextSeq - 1 });
        live.add(id);
      } else if (roll < 90) {
        // Replace a session by its own dump: its rows go and come back with new row ids.
        await store.restoreSession(await store.dumpSession(pick), { onExisting: "replace" });
      } else {
        const record = (await store.getSession(pick))!;
        if (record.nextSeq >= 4) {
          await store.applyCompaction(pick, {
            fromSeq: 0,
            toSeq: 1,
            summary: { role: "user", content: [{ type: "text", text: `summary ${text()}` }] },
          });
        }
      }
      if (step % 50 === 49) await check();
    }
    const { indexed, last } = mark(store);
    expect(last - indexed).toBeLessThan(WORDS_BATCH * 2);
    expect(last).toBeGreaterThan(WORDS_BATCH * 3);
    await check();
    await store.flushSearchIndex();
    expect(mark(store).indexed).toBe(mark(store).last);
    await check();
    await store.close();
  }, 120_000);
});
