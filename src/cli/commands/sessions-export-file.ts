import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createWriteStream, linkSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { FileAccessError, fromFileSystemError } from "../../errors/index.ts";

/** Writes to a stream, waiting when its buffer is full; rejects when the stream fails instead of draining. */
export async function writeTo(stream: NodeJS.WritableStream, chunk: string): Promise<void> {
  if (stream.write(chunk)) return;
  await new Promise<void>((resolve, reject) => {
    const settle = (error?: Error) => {
      stream.off("drain", settle);
      stream.off("error", settle);
      if (error) reject(error);
      else resolve();
    };
    stream.on("drain", settle);
    stream.on("error", settle);
  });
}

/** Refuses an output path that exists (a file is never overwritten) or is a folder. */
function checkNew(output: string): void {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(output).isDirectory();
  } catch {
    return;
  }
  throw new FileAccessError(
    output,
    isDirectory
      ? "is a folder; give the path of a new file, e.g. a name inside it"
      : "already exists; choose another file or remove it",
  );
}

/** Moves the finished temporary file to `output` without ever replacing a file that appeared meanwhile. */
function publish(temporary: string, output: string): void {
  try {
    linkSync(temporary, output);
    rmSync(temporary, { force: true });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "EEXIST") throw fromFileSystemError(error, output, "cannot write the export");
    // File systems without hard links: check and rename (the window between them is tiny).
    checkNew(output);
    renameSync(temporary, output);
  }
}

/**
 * Writes a new file through `write(chunk)`: everything goes to a temporary file in the same folder, which
 * takes the name `output` only once complete — a failure (a damaged database, a full disk, SIGINT or SIGTERM)
 * leaves nothing behind, and an existing file is never overwritten. Problems with the path raise `FileAccessError`.
 *
 * @example
 * await writeNewFile("backup.jsonl", (write) => writeSessionsJsonl(store, ids, write));
 */
export async function writeNewFile(
  output: string,
  body: (write: (chunk: string) => Promise<void>) => Promise<void>,
): Promise<void> {
  checkNew(output);
  const temporary = join(
    dirname(output),
    `.${basename(output)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`,
  );
  const file = createWriteStream(temporary, { flags: "wx" });
  // Interrupted (Ctrl-C, a kill): the half-written file goes, then the signal does what it would have done.
  const onSignal = (signal: NodeJS.Signals) => {
    rmSync(temporary, { force: true });
    stopWatching();
    process.kill(process.pid, signal);
  };
  const stopWatching = () => {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    await once(file, "open");
    await body((chunk) => writeTo(file, chunk));
    file.end();
    await once(file, "close");
    publish(temporary, output);
  } catch (error) {
    if (!file.closed) {
      file.destroy();
      await once(file, "close").catch(() => undefined);
    }
    rmSync(temporary, { force: true });
    throw fromFileSystemError(error, output, "cannot write the export");
  } finally {
    stopWatching();
  }
}
