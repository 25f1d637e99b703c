// Export → import → export through the durable stores, for every transcript of the shared corpus: a transcript
// imported into SQLite, exported as ctxkit JSONL, imported into PostgreSQL and exported again, then imported into
// a fresh SQLite file and exported a third time gives the same bytes each time, and the stored messages are the
// transcript's.
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importTranscriptFile } from "../../src/formats/transcripts/import-transcript.ts";
import { exportSessionsJsonl, importSessionsJsonl, importTranscriptSessions } from "../../src/store/index.ts";
import { openPostgresSessionStore, type PostgresSessionStore } from "../../src/store/postgres/index.ts";
import { openSqliteSessionStore } from "../../src/store/sqlite/index.ts";
import { transcriptFiles, transcriptName } from "../support/transcripts.ts";
import { postgresForTests, type TestPostgres } from "./pg-server.ts";

const NOW = "2026-01-02T03:04:05.000Z";
const folder = mkdtempSync(join(tmpdir(), "ctxkit-round-trip-"));
let server: TestPostgres | undefined;
let postgres: PostgresSessionStore | undefined;

beforeAll(async () => {
  server = await postgresForTests();
  const schema = `round_trip_${randomUUID().replaceAll("-", "")}`;
  postgres = await openPostgresSessionStore({ connectionString: server.url, schema, retentionDays: 0 });
});
afterAll(async () => {
  await postgres?.close();
  await server?.stop();
  rmSync(folder, { recursive: true, force: true });
});

describe("export → import → export through SQLite and PostgreSQL, for every transcript", () => {
  it("finds the corpus", () => {
    expect(transcriptFiles.length).toBeGreaterThan(20);
  });

  transcriptFiles.forEach((file, index) => {
    it(`${transcriptName(file)}: byte-identical exports, messages as imported`, async () => {
      const first = await openSqliteSessionStore({ path: join(folder, `${index}-a.db`), retentionDays: 0 });
      const { sessions } = await importTranscriptSessions(first, file, { now: NOW });
      const ids = sessions.map((session) => session.id);
      expect(ids.length).toBeGreaterThan(0);
      const exported = await exportSessionsJsonl(first, ids);

      const conversations = await importTranscriptFile(file);
      expect(ids).toEqual(conversations.map((conversation) => conversation.id));
      for (const conversation of conversations) {
        const stored = await first.loadMessages(conversation.id, { strategy: "all", media: "inline" });
        expect(stored).toEqual(conversation.messages);
      }
      await first.close();

      const imported = await importSessionsJsonl(postgres!, exported, { source: "export.jsonl" });
      expect(imported.sessions).toEqual(sessions);
      const again = await exportSessionsJsonl(postgres!, ids);
      expect(again).toBe(exported);
      for (const id of ids) expect(await postgres!.deleteSession(id)).toBe(true);

      const third = await openSqliteSessionStore({ path: join(folder, `${index}-c.db`), retentionDays: 0 });
      await importSessionsJsonl(third, again, { source: "again.jsonl" });
      expect(await exportSessionsJsonl(third, ids)).toBe(exported);
      await third.close();
    });
  });
});
