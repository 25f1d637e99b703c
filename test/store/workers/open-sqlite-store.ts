// Child process: opens a SQLite session store at argv[2], optionally appends a turn, and prints one JSON line
// describing the outcome ({ ok } or { error: { name, code, message } }). Used where a test needs another user
// (a read-only folder cannot be simulated for root) or another process.
import { openSqliteSessionStore } from "../../../src/store/sqlite/index.ts";

const [path, mode] = process.argv.slice(2);
try {
  const store = await openSqliteSessionStore({ path: path!, retentionDays: 0 });
  if (mode === "append") {
    await store.appendTurn("from-child", [{ role: "user", content: [{ type: "text", text: "hello" }] }]);
  }
  const sessions = (await store.listSessions()).sessions.map((session) => session.id);
  await store.close();
  process.stdout.write(`${JSON.stringify({ ok: true, sessions })}\n`);
} catch (error) {
  const { name, message } = error as Error;
  const code = (error as { code?: unknown }).code;
  process.stdout.write(`${JSON.stringify({ error: { name, code, message } })}\n`);
}
