// The stores a TypeScript agent developer would otherwise use, driven through their own APIs for the storage
// bench: LangGraph.js checkpointers and Mastra's storage. They are not the project's dependencies (npm ci never
// installs them: ~220 MB, and better-sqlite3 is a native addon): the bench installs the versions bench/peers/
// pins into a cache directory outside the project, builds better-sqlite3 there from source for this Node, and
// reports a peer it cannot install or run with the reason.
import { execFile, fork } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { ContentBlock, MessageInput } from "../../src/model/message.ts";
import { checkpointerTurns, type Checkpointer } from "./checkpointer-turns.ts";

const run = promisify(execFile);
const peersFolder = new URL("../peers/", import.meta.url);

/** One peer store, appending turns and loading threads through its own API. */
export interface PeerStore {
  /** Package and class, e.g. "LangGraph.js SqliteSaver". */
  readonly name: string;
  /** What it writes per turn and how durably. */
  readonly writes: string;
  /**
   * Appends each turn's messages to its session (creating it on its first turn), one after the other; resolves
   * with the milliseconds that took.
   */
  appendTurns(work: readonly { session: string; turn: MessageInput[] }[]): Promise<number>;
  /** Loads `session`'s messages; resolves with how many it got. */
  load(session: string): Promise<number>;
  close(): Promise<void>;
}

/** A peer, or why it could not be measured. */
export type PeerOutcome =
  | { readonly name: string; readonly store: PeerStore }
  | { readonly name: string; readonly unavailable: string };

const message = (error: unknown) => (error instanceof Error ? error.message : String(error)).split("\n")[0]!;

interface Installed {
  readonly root: string;
  readonly require: NodeJS.Require;
  /** Why better-sqlite3 (LangGraph's SQLite checkpointer) is missing, if it is. */
  readonly nativeProblem?: string;
}

let installation: Promise<Installed | { problem: string }> | undefined;

/**
 * Installs the pinned peers once per lock file (`npm ci --ignore-scripts` in `CTXKIT_BENCH_PEERS_DIR`, default
 * ~/.cache/ctxkit-bench-peers/<hash>), then builds better-sqlite3 from source with this Node's headers (the
 * `node` package of the project ships them): its install script would download a prebuilt binary, which this
 * machine cannot reach.
 */
function installPeers(): Promise<Installed | { problem: string }> {
  installation ??= (async () => {
    const lock = readFileSync(new URL("package-lock.json", peersFolder));
    const hash = createHash("sha256").update(lock).digest("hex").slice(0, 12);
    const root =
      process.env["CTXKIT_BENCH_PEERS_DIR"] ?? join(homedir(), ".cache", "ctxkit-bench-peers", hash);
    const npm = process.env["npm_execpath"];
    const npmCommand = (args: string[]) =>
      npm ? run(process.execPath, [npm, ...args], { cwd: root }) : run("npm", args, { cwd: root });
    const installed = join(root, "installed");
    if (!existsSync(installed)) {
      mkdirSync(root, { recursive: true });
      for (const file of ["package.json", "package-lock.json"])
        copyFileSync(new URL(file, peersFolder), join(root, file));
      try {
        await npmCommand(["ci", "--ignore-scripts", "--no-audit", "--no-fund"]);
      } catch (error) {
        return { problem: `npm ci of bench/peers failed: ${message(error)}` };
      }
      writeFileSync(installed, new Date().toISOString());
    }
    const built = join(root, "better-sqlite3-built");
    let nativeProblem: string | undefined;
    if (!existsSync(built)) {
      const headers = join(
        process.cwd(),
        "node_modules",
        "node",
        "node_modules",
        `node-${process.platform}-${process.arch}`,
      );
      try {
        await npmCommand([
          "rebuild",
          "better-sqlite3",
          ...(existsSync(headers) ? [`--nodedir=${headers}`] : []),
        ]);
        writeFileSync(built, process.version);
      } catch (error) {
        nativeProblem = `better-sqlite3 (a native addon) could not be built here: ${message(error)}`;
      }
    }
    return {
      root,
      require: createRequire(join(root, "package.json")),
      ...(nativeProblem && { nativeProblem }),
    };
  })();
  return installation;
}

/** The Mastra (AI SDK v4 UI) parts of a ctxkit message. */
function mastraParts(content: readonly ContentBlock[]): unknown[] {
  return content.map((block) => {
    if (block.type === "text") return { type: "text", text: block.text };
    if (block.type === "tool-call") {
      return {
        type: "tool-invocation",
        toolInvocation: { state: "call", toolCallId: block.id, toolName: block.name, args: block.input },
      };
    }
    if (block.type === "tool-result") {
      return {
        type: "tool-invocation",
        toolInvocation: {
          state: "result",
          toolCallId: block.callId,
          toolName: block.toolName,
          args: {},
          result: block.content,
        },
      };
    }
    return { type: "text", text: JSON.stringify(block) };
  });
}

interface MastraMemory {
  saveThread(input: { thread: Record<string, unknown> }): Promise<unknown>;
  saveMessages(input: { messages: Record<string, unknown>[] }): Promise<unknown>;
  listMessages(input: { threadId: string; perPage: false }): Promise<{ messages: unknown[] }>;
}

interface MastraStore {
  init(): Promise<void>;
  getStore(domain: "memory"): Promise<MastraMemory | undefined>;
  close?(): Promise<void>;
}

/** Mastra's memory storage: a thread row, then each turn's messages saved in one call (`saveMessages`). */
async function mastraPeer(
  name: string,
  writes: string,
  store: MastraStore,
  closeAll: () => Promise<void>,
): Promise<PeerStore> {
  await store.init();
  const memory = await store.getStore("memory");
  if (!memory) throw new Error("the store has no memory domain");
  const threads = new Set<string>();
  const appendTurn = async (session: string, turn: readonly MessageInput[]) => {
    const now = new Date();
    if (!threads.has(session)) {
      await memory.saveThread({
        thread: {
          id: session,
          resourceId: "bench",
          title: session,
          createdAt: now,
          updatedAt: now,
          metadata: {},
        },
      });
      threads.add(session);
    }
    await memory.saveMessages({
      messages: turn.map((input, index) => ({
        id: randomUUID(),
        threadId: session,
        resourceId: "bench",
        role: input.role === "tool" ? "assistant" : input.role,
        // Distinct times keep the turn's order on load.
        createdAt: new Date(now.getTime() + index),
        content: { format: 2, parts: mastraParts(input.content) },
      })),
    });
  };
  return {
    name,
    writes,
    appendTurns: (work) => timed(work, appendTurn),
    load: async (session) =>
      (await memory.listMessages({ threadId: session, perPage: false })).messages.length,
    close: closeAll,
  };
}

/** Runs `append` on each turn in order; the milliseconds it took. */
async function timed(
  work: readonly { session: string; turn: MessageInput[] }[],
  append: (session: string, turn: readonly MessageInput[]) => Promise<void>,
): Promise<number> {
  const begun = performance.now();
  for (const { session, turn } of work) await append(session, turn);
  return performance.now() - begun;
}

/**
 * LangGraph.js's SQLite checkpointer in a child process (checkpointer-child.ts), timed there. better-sqlite3 can
 * abort its process mid-run on this Node (see checkpointer-child.ts): the child is then started again on the same
 * file and given the same slice again (a few times at most), and its description says so.
 */
async function childCheckpointer(
  name: string,
  writes: string,
  root: string,
  path: string,
): Promise<PeerStore> {
  const start = async () => {
    const child = fork(new URL("checkpointer-child.ts", import.meta.url), [root, path], {
      stdio: ["ignore", "ignore", "pipe", "ipc"],
      serialization: "advanced",
    });
    let stderr = "";
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const replies: ((reply: { ok: boolean; value?: unknown; error?: string }) => void)[] = [];
    const exited = new Promise<never>((_, reject) =>
      child.once("exit", (code, signal) =>
        reject(new CrashError(`the checkpointer process exited (${code ?? signal}): ${stderr.slice(-500)}`)),
      ),
    );
    exited.catch(() => {});
    child.on("message", (reply: { ok: boolean; value?: unknown; error?: string }) =>
      replies.shift()?.(reply),
    );
    const ask = async (request?: unknown): Promise<unknown> => {
      const reply = new Promise<{ ok: boolean; value?: unknown; error?: string }>((resolve) =>
        replies.push(resolve),
      );
      if (request !== undefined) child.send(request as object);
      const { ok, value, error } = await Promise.race([reply, exited]);
      if (!ok) throw new Error(error);
      return value;
    };
    await ask();
    return { child, ask };
  };
  let current = await start();
  let restarts = 0;
  const ask = async (request: unknown): Promise<unknown> => {
    for (;;) {
      try {
        return await current.ask(request);
      } catch (error) {
        if (!(error instanceof CrashError) || restarts >= 3) throw error;
        restarts++;
        process.stderr.write(
          `  ${name}: its process aborted (${error.message.slice(0, 120)}…); started again\n`,
        );
        current = await start();
      }
    }
  };
  return {
    name,
    get writes() {
      return restarts === 0
        ? writes
        : `${writes} (its process aborted ${restarts} time${restarts === 1 ? "" : "s"} in better-sqlite3 and was started again on the same file, the slice it was writing sent again)`;
    },
    appendTurns: async (work) => (await ask({ op: "append", work })) as number,
    load: async (session) => (await ask({ op: "load", session })) as number,
    // SIGKILL: no exit-time teardown, where better-sqlite3 may abort (see checkpointer-child.ts).
    close: async () => {
      current.child.kill("SIGKILL");
    },
  };
}

/** The checkpointer's process died (not an error it answered with). */
class CrashError extends Error {}

const versionOf = (require: NodeJS.Require, name: string) =>
  (JSON.parse(readFileSync(require.resolve(`${name}/package.json`), "utf8")) as { version: string }).version;

async function attempt(name: string, open: () => Promise<PeerStore>): Promise<PeerOutcome> {
  try {
    return { name, store: await open() };
  } catch (error) {
    return { name, unavailable: message(error) };
  }
}

/** The SQLite peers, each on its own file in `folder`, synchronous = FULL as ctxkit's (WAL, an fsync per commit). */
export async function sqlitePeers(folder: string): Promise<PeerOutcome[]> {
  const installed = await installPeers();
  const names = ["LangGraph.js SqliteSaver", "Mastra LibSQLStore"];
  if ("problem" in installed) return names.map((name) => ({ name, unavailable: installed.problem }));
  const { require, root } = installed;
  const langgraph = await attempt(names[0]!, async () => {
    if (installed.nativeProblem) throw new Error(installed.nativeProblem);
    return childCheckpointer(
      `${names[0]} (@langchain/langgraph-checkpoint-sqlite ${versionOf(require, "@langchain/langgraph-checkpoint-sqlite")}, better-sqlite3)`,
      "as a graph writes a turn: per super-step (input, model reply, tool results) its writes and a checkpoint " +
        "holding the whole message list; WAL, synchronous = FULL (run in a process of " +
        "its own, its statements prepared once: better-sqlite3 12.11.1 aborts on this Node when the garbage " +
        "collector frees the ones it prepares per call)",
      root,
      join(folder, "langgraph.db"),
    );
  });
  const mastra = await attempt(names[1]!, async () => {
    const libsql = require("@libsql/client") as {
      createClient(
        this: void,
        config: { url: string },
      ): {
        execute(sql: string): Promise<{ rows: Record<string, unknown>[] }>;
        close(): void;
      };
    };
    const { LibSQLStore } = require("@mastra/libsql") as {
      LibSQLStore: new (config: { id: string; client: unknown }) => MastraStore;
    };
    const client = libsql.createClient({ url: `file:${join(folder, "mastra.db")}` });
    const store = new LibSQLStore({ id: "bench", client });
    const peer = await mastraPeer(
      `${names[1]} (@mastra/libsql ${versionOf(require, "@mastra/libsql")}, libsql)`,
      "",
      store,
      async () => client.close(),
    );
    // Its workflows domain sets synchronous = NORMAL on the shared connection: FULL, as ctxkit.
    await client.execute("PRAGMA journal_mode = WAL");
    await client.execute("PRAGMA synchronous = FULL");
    const mode = (await client.execute("PRAGMA synchronous")).rows[0]?.["synchronous"];
    return {
      ...peer,
      writes: `the thread row once, each turn's messages in one saveMessages transaction; WAL, synchronous = ${mode === 2 || mode === 2n ? "FULL" : String(mode)}`,
    };
  });
  return [langgraph, mastra];
}

/** The PostgreSQL peers, each in its own schema of the bench's cluster (the same commit settings as ctxkit). */
export async function postgresPeers(url: string, schemaPrefix: string): Promise<PeerOutcome[]> {
  const installed = await installPeers();
  const names = ["LangGraph.js PostgresSaver", "Mastra PostgresStore"];
  if ("problem" in installed) return names.map((name) => ({ name, unavailable: installed.problem }));
  const { require } = installed;
  const langgraph = await attempt(names[0]!, async () => {
    const { PostgresSaver } = require("@langchain/langgraph-checkpoint-postgres") as {
      PostgresSaver: {
        fromConnString(
          url: string,
          options: { schema: string },
        ): Checkpointer & {
          setup(): Promise<void>;
          end(): Promise<void>;
        };
      };
    };
    const { uuid6 } = require("@langchain/langgraph-checkpoint") as { uuid6: (clock: number) => string };
    const saver = PostgresSaver.fromConnString(url, { schema: `${schemaPrefix}_langgraph` });
    await saver.setup();
    const turns = checkpointerTurns(saver, uuid6);
    return {
      name: `${names[0]} (@langchain/langgraph-checkpoint-postgres ${versionOf(require, "@langchain/langgraph-checkpoint-postgres")})`,
      writes:
        "as a graph writes a turn: per super-step (input, model reply, tool results) its writes and a checkpoint, " +
        "the message list as a new blob version of its channel",
      appendTurns: (work) => timed(work, (session, turn) => turns.append(session, turn)),
      load: (session) => turns.load(session),
      close: () => saver.end(),
    };
  });
  const mastra = await attempt(names[1]!, async () => {
    const { PostgresStore } = require("@mastra/pg") as {
      PostgresStore: new (config: {
        id: string;
        connectionString: string;
        schemaName: string;
      }) => MastraStore;
    };
    const store = new PostgresStore({
      id: "bench",
      connectionString: url,
      schemaName: `${schemaPrefix}_mastra`,
    });
    return mastraPeer(
      `${names[1]} (@mastra/pg ${versionOf(require, "@mastra/pg")})`,
      "the thread row once, each turn's messages in one saveMessages transaction",
      store,
      async () => store.close?.(),
    );
  });
  return [langgraph, mastra];
}

/** The schemas the PostgreSQL peers create (for the bench to drop). */
export const PEER_SCHEMA_SUFFIXES = ["_langgraph", "_mastra"] as const;
