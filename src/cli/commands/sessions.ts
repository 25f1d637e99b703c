import type { Command } from "commander";
import { z } from "zod";
import { NotFoundError, ValidationError } from "../../errors/errors.ts";
import { readTranscriptText } from "../../formats/transcripts/read-transcript-text.ts";
import { validate } from "../../model/schemas.ts";
import { importSessionsJsonl } from "../../store/jsonl/import-sessions-jsonl.ts";
import { writeSessionsJsonl } from "../../store/jsonl/export-sessions-jsonl.ts";
import type { SessionRecord, SessionStore } from "../../store/session-store.ts";
import { progressBar } from "../progress-bar.ts";
import type { CliIo, CommandRegistration } from "../program.ts";
import {
  formatImported,
  formatSearchHits,
  formatSessionDetails,
  formatSessionTable,
} from "./sessions-format.ts";
import { writeNewFile, writeTo } from "./sessions-export-file.ts";
import { explainExisting, onExistingOf, withExistingOptions, type ExistingFlags } from "./import-flags.ts";
import { withCliStore, withReadOnlyCliStore, withStoreOptions, type StoreFlags } from "./sessions-store.ts";

interface Flags extends StoreFlags {
  readonly json?: boolean;
}

const HINT = "list them with `ctxkit sessions list`";
/** A whole-number option; each way to miss says what is wanted (0 is a number, so "must be a number" is not). */
const count = (name: string, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce
    .number({ error: `${name} must be a number` })
    .int(`${name} must be a whole number`)
    .min(min, `${name} must be at least ${min}`)
    .max(max, `${name} must be at most ${max}`);

function print(io: CliIo, flags: Flags, json: () => unknown, text: () => string): void {
  io.stdout.write(flags.json === true ? `${JSON.stringify(json(), null, 2)}\n` : text());
}

async function sessionOrThrow(store: SessionStore, id: string): Promise<SessionRecord> {
  const session = await store.getSession(id);
  if (!session) throw new NotFoundError("session", id, HINT);
  return session;
}

/** Thrown to stop an export whose reader went away (`ctxkit sessions export --all | head`). */
class ReaderGone extends Error {}

/** Writes JSONL to stdout; stops quietly when the reader closes the pipe. */
async function exportToStdout(store: SessionStore, ids: readonly string[], io: CliIo): Promise<void> {
  let gone = false;
  const onError = (error: Error & { code?: unknown }) => {
    if (error.code === "EPIPE") gone = true;
  };
  io.stdout.on("error", onError);
  try {
    await writeSessionsJsonl(store, ids, async (chunk) => {
      if (gone) throw new ReaderGone();
      await writeTo(io.stdout, chunk).catch((error: unknown) => {
        throw (error as { code?: unknown }).code === "EPIPE" ? new ReaderGone() : error;
      });
    });
  } catch (error) {
    if (!(error instanceof ReaderGone)) throw error;
  } finally {
    io.stdout.off("error", onError);
  }
}

async function allSessionIds(store: SessionStore): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listSessions({ limit: 1000, ...(cursor !== undefined && { cursor }) });
    ids.push(...page.sessions.map((session) => session.id));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return ids;
}

function list(io: CliIo) {
  const schema = z.object({
    limit: count("--limit", 1, 1000).default(50),
    cursor: z.string().optional(),
    owner: z.string().optional(),
    agent: z.string().optional(),
  });
  return (flags: Flags & Record<string, unknown>) => {
    const options = validate(schema, flags, "sessions list options");
    return withReadOnlyCliStore(flags, io, async ({ store }) => {
      const page = await store.listSessions(options);
      print(
        io,
        flags,
        () => page,
        () =>
          formatSessionTable(page.sessions) +
          (page.nextCursor === undefined ? "" : `more: --cursor ${page.nextCursor}\n`),
      );
    });
  };
}

function show(io: CliIo) {
  return (id: string, flags: Flags & { all?: boolean }) =>
    withReadOnlyCliStore(flags, io, async ({ store }) => {
      const session = await sessionOrThrow(store, id);
      const messages = await store.loadMessages(id, { strategy: flags.all === true ? "all" : "full" });
      print(
        io,
        flags,
        () => ({ session, messages }),
        () => formatSessionDetails(session, messages),
      );
    });
}

function search(io: CliIo) {
  const schema = z.object({ limit: count("--limit", 1, 1000).default(20) });
  return (query: string, flags: Flags & Record<string, unknown>) => {
    const { limit } = validate(schema, flags, "sessions search options");
    return withReadOnlyCliStore(flags, io, async ({ store }) => {
      const hits = await store.searchSessions(query, { limit });
      print(
        io,
        flags,
        () => ({ hits }),
        () => formatSearchHits(hits),
      );
    });
  };
}

function exportCommand(io: CliIo) {
  return (ids: string[], flags: Flags & { all?: boolean; output?: string }) =>
    withReadOnlyCliStore(flags, io, async ({ store }) => {
      if (ids.length === 0 && flags.all !== true) {
        throw new ValidationError("name the sessions to export, or pass --all");
      }
      const chosen = flags.all === true ? await allSessionIds(store) : ids;
      for (const id of chosen) await sessionOrThrow(store, id);
      if (flags.output === undefined) return exportToStdout(store, chosen, io);
      await writeNewFile(flags.output, (write) => writeSessionsJsonl(store, chosen, write));
      print(
        io,
        flags,
        () => ({ file: flags.output, sessions: chosen }),
        () => `exported ${chosen.length} session${chosen.length === 1 ? "" : "s"} to ${flags.output}\n`,
      );
    });
}

function importCommand(io: CliIo) {
  return (file: string, flags: Flags & ExistingFlags) => {
    const onExisting = onExistingOf(flags);
    return withCliStore(flags, io, async ({ store }) => {
      // A file larger than one string can hold is read line by line.
      const read = await readTranscriptText(file);
      if (read === undefined) throw new NotFoundError("file", file, "check the path");
      const progress = progressBar(io, "import");
      const result = await explainExisting(() =>
        importSessionsJsonl(store, read.text, {
          source: file,
          onExisting,
          onProgress: (done, total) => progress.update(done, total),
        }),
      );
      progress.done();
      print(
        io,
        flags,
        () => result,
        () => formatImported(result.sessions, result.skipped),
      );
    });
  };
}

function fork(io: CliIo) {
  const schema = z.object({
    at: count("--at").optional(),
    as: z.string().optional(),
    title: z.string().optional(),
  });
  return (id: string, flags: Flags & Record<string, unknown>) =>
    withCliStore(flags, io, async ({ store }) => {
      const options = validate(schema, flags, "sessions fork options");
      await sessionOrThrow(store, id);
      let atSeq = options.at;
      if (atSeq === undefined) {
        const last = (await store.loadMessages(id)).at(-1);
        if (last === undefined) throw new ValidationError(`session ${id} has no message to fork at`);
        atSeq = last.seq;
      }
      const session = await store.forkSession(id, {
        atSeq,
        ...(options.as !== undefined && { id: options.as }),
        ...(options.title !== undefined && { title: options.title }),
      });
      print(
        io,
        flags,
        () => ({ session }),
        () => `forked ${id} at seq ${atSeq}: ${session.id} (${session.messageCount} messages)\n`,
      );
    });
}

function rename(io: CliIo) {
  return (id: string, title: string, flags: Flags) =>
    withCliStore(flags, io, async ({ store }) => {
      await sessionOrThrow(store, id);
      const session = await store.renameSession(id, title);
      print(
        io,
        flags,
        () => ({ session }),
        () => `renamed ${id}: ${session.title ?? ""}\n`,
      );
    });
}

function remove(io: CliIo) {
  return (ids: string[], flags: Flags) =>
    withCliStore(flags, io, async ({ store }) => {
      // Every id is checked before anything is deleted, so a typo deletes nothing.
      for (const id of ids) await sessionOrThrow(store, id);
      const deleted: string[] = [];
      for (const id of ids) if (await store.deleteSession(id)) deleted.push(id);
      print(
        io,
        flags,
        () => ({ deleted }),
        () => deleted.map((id) => `deleted ${id}\n`).join(""),
      );
    });
}

function prune(io: CliIo) {
  const schema = z.object({ days: count("--days").optional() });
  return async (flags: Flags & Record<string, unknown>) => {
    const options = validate(schema, flags, "sessions prune options");
    await withCliStore(flags, io, async ({ store, settings }) => {
      const days = options.days ?? settings.sessionRetentionDays;
      const result = await store.cleanup(days);
      print(
        io,
        flags,
        () => ({ days, ...result }),
        () =>
          days === 0
            ? "retention is 0 days (keep forever): nothing deleted; pass --days N to prune\n"
            : `deleted ${result.deletedSessions} session${result.deletedSessions === 1 ? "" : "s"} idle for more than ${days} days and ${result.deletedBlobs} unused blob${result.deletedBlobs === 1 ? "" : "s"}\n`,
      );
    });
  };
}

/**
 * `ctxkit sessions list|show|search|export|import|fork|rename|delete|prune [--db <path>|--pg <url>] [--json]`:
 * the stored sessions of the configured database (SQLite `~/.ctxkit/ctxkit.db` by default; `CTXKIT_DB` and
 * `CTXKIT_PG_URL` override it).
 *
 * @example
 * await runCli(["sessions", "list", "--json"], io);
 */
export const registerSessions: CommandRegistration = (program: Command, io: CliIo) => {
  const sessions = program
    .command("sessions")
    .description("list, show, search, export, import, fork, rename, delete and prune stored sessions");
  const sub = (name: string, description: string) =>
    withStoreOptions(sessions.command(name).description(description)).option("--json", "print JSON");

  sub("list", "sessions, newest first")
    .option("--limit <n>", "page size (1–1000)", "50")
    .option("--cursor <cursor>", "the next page, as printed after a full page")
    .option("--owner <owner>", "only this owner's sessions")
    .option("--agent <agent>", "only this agent's sessions")
    .action(list(io));
  sub("show", "a session's figures and messages")
    .argument("<id>", "session id")
    .option("--all", "include messages replaced by summaries")
    .action(show(io));
  sub("search", "sessions whose title or messages match words")
    .argument("<query>", "words to look for")
    .option("--limit <n>", "most hits (1–1000)", "20")
    .action(search(io));
  sub("export", "write sessions as ctxkit JSONL (lossless)")
    .argument("[ids...]", "session ids")
    .option("--all", "every session")
    .option("-o, --output <file>", "write to a new file instead of stdout")
    .action(exportCommand(io));
  withExistingOptions(sub("import", "read sessions from a ctxkit JSONL export, all or nothing"))
    .argument("<file>", "ctxkit JSONL file")
    .action(importCommand(io));
  sub("fork", "copy a session up to a message into a new session")
    .argument("<id>", "session id")
    .option("--at <seq>", "seq of the last message to keep (default: the last one)")
    .option("--as <newId>", "id of the new session (default: generated)")
    .option("--title <title>", "title of the new session (default: the parent's)")
    .action(fork(io));
  sub("rename", "set a session's title")
    .argument("<id>", "session id")
    .argument("<title>", "new title (at most 100 characters)")
    .action(rename(io));
  sub("delete", "delete sessions with their blobs").argument("<ids...>", "session ids").action(remove(io));
  sub("prune", "delete sessions idle for longer than the retention period")
    .option("--days <n>", "idle days (default: the sessionRetentionDays setting, 30; 0 keeps all)")
    .action(prune(io));
};
