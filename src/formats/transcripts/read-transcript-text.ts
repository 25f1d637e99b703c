import { constants } from "node:buffer";
import { createReadStream } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { ParseError } from "../../errors/errors.ts";
import { fromFileSystemError } from "../../errors/file-access-error.ts";
import type { TextOrLines } from "../text-lines.ts";

/**
 * The largest file read as one string: V8's string limit (about 512 MB) in UTF-16 units, which a UTF-8 file
 * of that many bytes cannot exceed. Larger files are read line by line.
 */
export const MAX_TEXT_BYTES: number = constants.MAX_STRING_LENGTH;

/** A transcript file's content and whether its last line ends with a newline. */
export interface TranscriptText {
  /** The whole text, or its lines when the file is larger than the string limit. */
  readonly text: TextOrLines;
  /** True when the file is empty or ends with `\n` (its last line is complete). */
  readonly terminated: boolean;
}

/**
 * Reads a transcript file: as one string up to `maxTextBytes` (default `MAX_TEXT_BYTES`), line by line
 * beyond. Undefined when the file does not exist; `FileAccessError` when it cannot be read (a folder, no
 * permission); `ParseError` for a single line longer than a string can be.
 *
 * @example
 * const read = await readTranscriptText("session.jsonl");
 */
export async function readTranscriptText(
  path: string,
  options: { readonly maxTextBytes?: number } = {},
): Promise<TranscriptText | undefined> {
  try {
    const { size } = await stat(path);
    if (size > (options.maxTextBytes ?? MAX_TEXT_BYTES)) return await readLines(path);
    const text = withoutBom(await readFile(path, "utf8"));
    return { text, terminated: text === "" || text.endsWith("\n") };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw fromFileSystemError(error, path, "cannot read the file");
  }
}

/** The file's lines, read in 1 MB chunks; each line is decoded on its own, so none needs the whole file. */
async function readLines(path: string): Promise<TranscriptText> {
  const lines: string[] = [];
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, newline);
      lines.push((pending.length === 0 ? piece : Buffer.concat([...pending, piece])).toString("utf8"));
      pending = [];
      pendingBytes = 0;
      start = newline + 1;
    }
    if (start < chunk.length) {
      pending.push(chunk.subarray(start));
      pendingBytes += chunk.length - start;
      if (pendingBytes > MAX_TEXT_BYTES) {
        throw new ParseError(
          path,
          lines.length + 1,
          `lines shorter than ${Math.floor(MAX_TEXT_BYTES / 1024 / 1024)} MB`,
          "the line is longer than the longest string JavaScript can hold",
        );
      }
    }
  }
  const terminated = pending.length === 0;
  if (!terminated) lines.push(Buffer.concat(pending).toString("utf8"));
  if (lines.length > 0) lines[0] = withoutBom(lines[0]!);
  return { text: lines, terminated };
}

/** The text without the byte-order mark some Windows tools write first (JSON parsers refuse it). */
function withoutBom(text: string): string {
  return text.startsWith("\uFEFF") ? text.slice(1) : text;
}
