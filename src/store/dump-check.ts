import { ValidationError } from "../errors/errors.ts";
import { messageSchema, validate } from "../model/schemas.ts";
import { checkSessionId } from "./append-plan.ts";
import { blobRef } from "./blob-store.ts";
import { externalizeMedia } from "./media-blobs.ts";
import type { BlobData, SessionDump, StoredRow } from "./session-store.ts";

/**
 * Validates a dump before a backend restores it, and moves large inline media of its rows to blobs (as an
 * append would). Throws `ValidationError` naming the first problem; nothing is written then.
 *
 * @example
 * const checked = checkDump(dump, 1024);
 */
export function checkDump(dump: SessionDump, inlineMediaLimit: number): SessionDump {
  const sessionId = checkSessionId(dump.session.id);
  const seqs = new Set<number>();
  const ids = new Set<string>();
  let maxSeq = -1;
  const blobs = new Map<string, BlobData>();
  for (const blob of dump.blobs) {
    if (blobRef(blob.bytes) !== blob.ref) {
      throw new ValidationError(
        `blob ${blob.ref} of session ${sessionId} does not match its content; the export is damaged`,
      );
    }
    blobs.set(blob.ref, blob);
  }
  const rows: StoredRow[] = dump.rows.map((row) => {
    const message = validate(
      messageSchema,
      row.message,
      `message ${row.message.seq} of session ${sessionId}`,
    );
    if (message.sessionId !== sessionId) {
      throw new ValidationError(
        `message ${message.id} belongs to session "${message.sessionId}", not "${sessionId}"`,
      );
    }
    if (seqs.has(message.seq))
      throw new ValidationError(`session ${sessionId} has two messages with seq ${message.seq}`);
    if (ids.has(message.id))
      throw new ValidationError(`session ${sessionId} has two messages with id "${message.id}"`);
    if (!Number.isInteger(row.position) || row.position < 0) {
      throw new ValidationError(`message ${message.seq} of session ${sessionId} has an invalid position`);
    }
    seqs.add(message.seq);
    ids.add(message.id);
    maxSeq = Math.max(maxSeq, message.seq);
    const external = externalizeMedia(row.message, inlineMediaLimit);
    for (const blob of external.blobs) blobs.set(blob.ref, blob);
    return external.message === row.message ? row : { ...row, message: external.message };
  });
  for (const row of rows) {
    if (row.summarizedBy !== undefined && !seqs.has(row.summarizedBy)) {
      throw new ValidationError(
        `message ${row.message.seq} of session ${sessionId} is marked replaced by summary ${row.summarizedBy}, which is missing`,
      );
    }
  }
  const session = dump.session.nextSeq > maxSeq ? dump.session : { ...dump.session, nextSeq: maxSeq + 1 };
  return { ...dump, session, rows, blobs: [...blobs.values()].sort((a, b) => (a.ref < b.ref ? -1 : 1)) };
}

/**
 * Validates a batch of dumps (each as `checkDump` does) and refuses a session id given twice. Throws
 * `ValidationError` naming the first problem; nothing is written then.
 *
 * @example
 * const checked = checkDumps(dumps, 1024);
 */
export function checkDumps(dumps: readonly SessionDump[], inlineMediaLimit: number): SessionDump[] {
  const seen = new Set<string>();
  return dumps.map((dump) => {
    const checked = checkDump(dump, inlineMediaLimit);
    if (seen.has(checked.session.id)) {
      throw new ValidationError(`session ${checked.session.id} appears twice in one batch; restore it once`);
    }
    seen.add(checked.session.id);
    return checked;
  });
}
