import { readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import {
  detectFormat,
  importTranscriptFile,
  type TranscriptFormat,
} from "../../src/formats/transcripts/index.ts";
import type { Message } from "../../src/model/message.ts";
import { replayableMessages } from "../../src/replay/replay.ts";

/** Absolute path of the shared transcript corpus (`../shared/data/transcripts` beside the repository). */
export const transcriptsRoot: string = fileURLToPath(
  new URL("../../../shared/data/transcripts/", import.meta.url),
);

const transcriptExtensions = /\.(jsonl|json|traj)$/i;

/**
 * Absolute paths of every transcript file under `transcriptsRoot`, sorted: all `.jsonl`, `.json` and `.traj`
 * files except Claude Code's `agent-*.meta.json` sidecars (MANIFEST, ATTRIBUTION, LICENSE and Markdown docs
 * have other extensions). Held-out files are simply absent, so tests must not assume a fixed list.
 *
 * @example
 * for (const file of transcriptFiles) it(transcriptName(file), async () => { await importTranscriptFile(file); });
 */
export const transcriptFiles: readonly string[] = readdirSync(transcriptsRoot, {
  recursive: true,
  withFileTypes: true,
})
  .filter(
    (entry) => entry.isFile() && transcriptExtensions.test(entry.name) && !entry.name.endsWith(".meta.json"),
  )
  .map((entry) => join(entry.parentPath, entry.name))
  .sort();

const formats = new Map<string, TranscriptFormat>();

/**
 * The corpus files of one format, detected from their content (never from folder names, so a new folder of a
 * known agent is included without a change here).
 *
 * @example
 * for (const file of transcriptFilesOf("codex")) …
 */
export function transcriptFilesOf(format: TranscriptFormat): string[] {
  return transcriptFiles.filter((file) => {
    let detected = formats.get(file);
    if (detected === undefined) {
      detected = detectFormat(readFileSync(file, "utf8"), file);
      formats.set(file, detected);
    }
    return detected === format;
  });
}

/**
 * A transcript's path relative to the corpus root, with `/` separators, for test names and lookups.
 *
 * @example
 * transcriptName(transcriptFiles[0]!); // "claude-code__daaain-claude-code-log/…/7acd37a8-….jsonl"
 */
export function transcriptName(path: string): string {
  return relative(transcriptsRoot, path).split(sep).join("/");
}

/**
 * The absolute path of a transcript given relative to the corpus root.
 *
 * @example
 * transcriptPath("tau-bench/gpt-4o-airline.json");
 */
export function transcriptPath(name: string): string {
  return join(transcriptsRoot, ...name.split("/"));
}

/** A real Claude Code session that outgrows small windows (compactions, offloads, edits from earlier reads). */
export const SOUND_RECORDER_SESSION =
  "claude-code__daaain-claude-code-log/-Users-dain-workspace-JSSoundRecorder/7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl";

/**
 * The replayable messages (see `replayableMessages`) of a transcript's first conversation.
 *
 * @example
 * const messages = await transcriptMessages(SOUND_RECORDER_SESSION);
 */
export async function transcriptMessages(name: string): Promise<Message[]> {
  const [conversation] = await importTranscriptFile(transcriptPath(name));
  return replayableMessages(conversation!.messages);
}
