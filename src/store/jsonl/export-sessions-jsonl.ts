import { CTXKIT_JSONL_VERSION } from "../../formats/ctxkit-jsonl/index.ts";
import { formatCtxkitRecord } from "../../formats/ctxkit-jsonl/write-ctxkit-jsonl.ts";
import type { SessionDump, SessionStore } from "../session-store.ts";
import { blobLine, sessionLine } from "./session-lines.ts";

/**
 * The JSONL lines of one session (no header): its `conversation` line (readable by any ctxkit JSONL reader),
 * its `session` line, its `blob` lines by ref, then every stored row as a `message` line in seq order —
 * summarised rows included.
 *
 * @example
 * for (const line of sessionJsonlLines(await store.dumpSession("s1"))) out.write(`${line}\n`);
 */
export function* sessionJsonlLines(dump: SessionDump): Generator<string> {
  const { session } = dump;
  yield formatCtxkitRecord({
    type: "conversation",
    id: session.id,
    format: session.origin?.format ?? "ctxkit",
    source: session.origin?.source ?? "",
    ...(session.title !== undefined && { title: session.title }),
    ...(session.origin?.sidechain !== undefined && { sidechain: session.origin.sidechain }),
    ...(Object.keys(session.metadata).length > 0 && { metadata: session.metadata }),
  });
  yield JSON.stringify(sessionLine(dump));
  for (const blob of dump.blobs) yield JSON.stringify(blobLine(session.id, blob));
  for (const row of dump.rows) yield formatCtxkitRecord({ type: "message", message: row.message });
}

/** The header line of a store export. */
export const EXPORT_HEADER = formatCtxkitRecord({ type: "ctxkit", version: CTXKIT_JSONL_VERSION });

/**
 * Writes sessions as ctxkit JSONL through `write`, one line at a time (so large sessions never sit in memory
 * as one string). Lossless: importing the output and exporting again gives the same bytes.
 *
 * @example
 * await writeSessionsJsonl(store, ["s1", "s2"], (line) => stream.write(line));
 */
export async function writeSessionsJsonl(
  store: SessionStore,
  sessionIds: readonly string[],
  write: (chunk: string) => void | Promise<void>,
): Promise<void> {
  await write(`${EXPORT_HEADER}\n`);
  for (const id of sessionIds) {
    const dump = await store.dumpSession(id);
    for (const line of sessionJsonlLines(dump)) await write(`${line}\n`);
  }
}

/**
 * Sessions as one ctxkit JSONL string.
 *
 * @example
 * writeFileSync("backup.ctxkit.jsonl", await exportSessionsJsonl(store, ["s1"]));
 */
export async function exportSessionsJsonl(
  store: SessionStore,
  sessionIds: readonly string[],
): Promise<string> {
  const chunks: string[] = [];
  await writeSessionsJsonl(store, sessionIds, (chunk) => {
    chunks.push(chunk);
  });
  return chunks.join("");
}
