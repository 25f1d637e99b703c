/**
 * A real PostgreSQL server for tests. CI starts one in `.ci/services.sh` and exports `CTXKIT_TEST_PG_URL`;
 * locally, when that variable is unset, `postgresForTests()` starts a throwaway cluster with the installed
 * binaries (initdb into a temporary folder, listening on 127.0.0.1 only) and stops it afterwards. When no
 * server can be had it throws, so PostgreSQL tests fail instead of being skipped.
 *
 * The default export is a vitest `globalSetup` that does the same once for the whole run.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

/** A server the tests can use. */
export interface TestPostgres {
  readonly url: string;
  stop(): Promise<void>;
}

function binDirectory(): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((name) => existsSync(join(root, name, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions[0] !== undefined) return join(root, versions[0], "bin");
  const found = spawnSync("sh", ["-c", "command -v initdb"], { encoding: "utf8" }).stdout.trim();
  if (found) return found.slice(0, found.lastIndexOf("/"));
  throw new Error(
    "PostgreSQL tests need a server: set CTXKIT_TEST_PG_URL, or install PostgreSQL (apt-get install postgresql)",
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

/** initdb refuses to run as root, so as root the cluster runs as the `postgres` user. */
function runAs(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
  return { uid, gid };
}

/**
 * Starts a throwaway cluster on 127.0.0.1 and creates database `ctxkit_test`.
 *
 * @example
 * const server = await startPostgres(); … await server.stop();
 */
export async function startPostgres(): Promise<TestPostgres> {
  const bin = binDirectory();
  const user = runAs();
  const folder = mkdtempSync(join(tmpdir(), "ctxkit-pg-"));
  if (user.uid !== undefined) chownSync(folder, user.uid, user.gid!);
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
    const settings = `-c listen_addresses=127.0.0.1 -p ${port} -k ${folder} -c max_connections=200`;
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
 * its URL to the test workers. Add `globalSetup: ["test/store/pg-server.ts"]` to vitest.config.ts to use it.
 */
export default async function setup(): Promise<() => Promise<void>> {
  if (process.env["CTXKIT_TEST_PG_URL"]) return async () => {};
  const server = await startPostgres();
  process.env["CTXKIT_TEST_PG_URL"] = server.url;
  return () => server.stop();
}
