import { PartialLastLineError } from "../../errors/errors.ts";
import type { TextOrLines } from "../text-lines.ts";
import type { TranscriptText } from "./read-transcript-text.ts";

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** The number of `\n` in a text (or of lines but the last), i.e. the number of the last line minus one. */
function completeLineCount(text: TextOrLines): number {
  if (typeof text !== "string") return text.length - 1;
  let count = 0;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) count++;
  return count;
}

/**
 * A JSONL transcript without a last line that was cut off mid-record (no newline after it, not JSON): a live
 * transcript caught while its agent writes. `error` (default) raises `PartialLastLineError` naming the line;
 * `drop` leaves the line out. A complete file, or a last line that is whole JSON, is returned as it is.
 *
 * @example
 * const text = withoutPartialLastLine(await readTranscriptText(path), path, "drop");
 */
export function withoutPartialLastLine(
  read: TranscriptText,
  source: string,
  mode: "error" | "drop" = "error",
): TextOrLines {
  if (read.terminated) return read.text;
  const { text } = read;
  const last = typeof text === "string" ? text.slice(text.lastIndexOf("\n") + 1) : (text.at(-1) ?? "");
  if (last.trim() === "" || isJson(last.trim())) return text;
  if (mode === "error") throw new PartialLastLineError(source, completeLineCount(text) + 1);
  return typeof text === "string" ? text.slice(0, text.lastIndexOf("\n") + 1) : text.slice(0, -1);
}
