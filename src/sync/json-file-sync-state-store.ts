import { randomUUID } from "node:crypto";
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { CorruptStoreError, SchemaTooNewError, StoreError } from "../errors/errors.ts";
import { WriteQueue } from "../conversation/write-queue.ts";
import { parseLedgerState, type LedgerState } from "./ledger-state.ts";
import type { SyncStateStore } from "./sync-state-store.ts";
import { ensureDirectory } from "../errors/ensure-directory.ts";

const FILE_VERSION = 1;

interface FileContent {
  version: typeof FILE_VERSION;
  sessions: Record<string, LedgerState>;
}

/**
 * A `SyncStateStore` in one JSON file. Every save rewrites the file through a temporary file and a rename, so a
 * crash leaves either the old or the new content. Writes from this process are serialised; one process should
 * own the file.
 *
 * @example
 * const store = new JsonFileSyncStateStore("/var/lib/ctxkit/sync-state.json");
 * attachSyncEndpoint(server, { path: "/sync", store, executors: { desktop } });
 */
export class JsonFileSyncStateStore implements SyncStateStore {
  readonly #file: string;
  readonly #queue = new WriteQueue();

  constructor(file: string) {
    this.#file = file;
  }

  async load(sessionId: string): Promise<LedgerState | undefined> {
    const content = await this.#queue.run(() => this.#read());
    const state = content.sessions[sessionId];
    return state === undefined ? undefined : parseLedgerState(state, `${this.#file}#${sessionId}`);
  }

  async save(sessionId: string, state: LedgerState): Promise<void> {
    const checked = parseLedgerState(state, `state to save for ${sessionId}`);
    await this.#queue.run(async () => {
      const content = await this.#read();
      await this.#write({ ...content, sessions: { ...content.sessions, [sessionId]: checked } });
    });
  }

  async delete(sessionId: string): Promise<boolean> {
    return this.#queue.run(async () => {
      const content = await this.#read();
      if (!(sessionId in content.sessions)) return false;
      const { [sessionId]: _removed, ...sessions } = content.sessions;
      await this.#write({ ...content, sessions });
      return true;
    });
  }

  async #read(): Promise<FileContent> {
    let text: string;
    try {
      text = await readFile(this.#file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return { version: FILE_VERSION, sessions: {} };
      throw new StoreError(`cannot read ${this.#file}; check its permissions`, true, { cause: error });
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new CorruptStoreError(this.#file, "not valid JSON", { cause: error });
    }
    const version = (parsed as { version?: unknown } | null)?.version;
    if (typeof version === "number" && version > FILE_VERSION) {
      throw new SchemaTooNewError(version, FILE_VERSION, this.#file);
    }
    const sessions = (parsed as { sessions?: unknown } | null)?.sessions;
    if (
      version !== FILE_VERSION ||
      typeof sessions !== "object" ||
      sessions === null ||
      Array.isArray(sessions)
    ) {
      throw new CorruptStoreError(this.#file, "not a ctxkit sync state file");
    }
    return { version: FILE_VERSION, sessions: sessions as Record<string, LedgerState> };
  }

  async #write(content: FileContent): Promise<void> {
    const temporary = `${this.#file}.${randomUUID()}.tmp`;
    try {
      ensureDirectory(dirname(this.#file));
      await writeFile(temporary, JSON.stringify(content), { encoding: "utf8", mode: 0o600 });
      await rename(temporary, this.#file);
    } catch (error) {
      await rm(temporary, { force: true });
      throw new StoreError(`cannot write ${this.#file}; check the disk and its permissions`, true, {
        cause: error,
      });
    }
  }
}
