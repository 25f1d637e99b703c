import { z } from "zod";
import { NotFoundError, ParseError, UnknownFormatError } from "../../errors/errors.ts";
import type { JsonValue } from "../../model/message.ts";
import { validate } from "../../model/schemas.ts";
import { importClaudeCode } from "./claude-code-importer.ts";
import { importCodex } from "./codex-importer.ts";
import { importCtxkitJsonl } from "./ctxkit-jsonl-importer.ts";
import { detectFormat } from "./detect-format.ts";
import { importGeminiCli } from "./gemini-cli-importer.ts";
import {
  TRANSCRIPT_FORMATS,
  type ImportedConversation,
  type TranscriptFormat,
} from "./imported-conversation.ts";
import { parseJsonDocument } from "./json-lines.ts";
import { importOpenAiChat } from "./openai-chat-importer.ts";
import { withoutPartialLastLine } from "./partial-last-line.ts";
import { MAX_TEXT_BYTES, readTranscriptText } from "./read-transcript-text.ts";
import { importSweAgent } from "./swe-agent-importer.ts";
import type { TextOrLines } from "../text-lines.ts";

/** Options of `importTranscript`. */
export interface ImportTranscriptOptions {
  /** Names the transcript in ids and errors; usually the file path. */
  readonly source: string;
  /** The format, or `auto` (default) to detect it. */
  readonly format?: TranscriptFormat | "auto" | undefined;
}

const formatOptionSchema = z.enum([...TRANSCRIPT_FORMATS, "auto"]).optional();

/** Formats written one JSON record per line: read line by line when a file is too large for one string. */
const lineImporters = {
  "claude-code": importClaudeCode,
  codex: importCodex,
  ctxkit: importCtxkitJsonl,
} as const satisfies Record<string, (text: TextOrLines, source: string) => ImportedConversation[]>;

type LineFormat = keyof typeof lineImporters;

const importers: Readonly<
  Record<TranscriptFormat, (text: string, source: string) => ImportedConversation[]>
> = {
  ...lineImporters,
  "gemini-cli": importGeminiCli,
  openai: importOpenAiChat,
  "swe-agent": importSweAgent,
};

function isLineFormat(format: TranscriptFormat): format is LineFormat {
  return format in lineImporters;
}

/**
 * Imports every conversation of a transcript given as text. Throws `ParseError` (file, line, what was
 * expected) for malformed input and `UnknownFormatError` when the format cannot be detected.
 *
 * @example
 * const conversations = importTranscript(text, { source: "session.jsonl" });
 * conversations[0]!.messages.length;
 */
export function importTranscript(text: string, options: ImportTranscriptOptions): ImportedConversation[] {
  const format = validate(formatOptionSchema, options.format, "transcript format") ?? "auto";
  const resolved = format === "auto" ? detectFormat(text, options.source) : format;
  return importers[resolved](text, options.source);
}

/** Options of `importTranscriptFile`. */
export interface ImportTranscriptFileOptions {
  /** The format, or `auto` (default) to detect it. */
  readonly format?: TranscriptFormat | "auto" | undefined;
  /**
   * A JSONL transcript's last line cut off mid-record (its agent still writing): `error` (default) raises
   * `PartialLastLineError`; `drop` imports the file up to its last whole line.
   */
  readonly partialLastLine?: "error" | "drop";
  /**
   * Files larger than this many bytes are read line by line (default `MAX_TEXT_BYTES`, the longest string);
   * JSON-document formats cannot be, and raise a `ParseError` naming the limit.
   */
  readonly maxTextBytes?: number;
}

/** A transcript file read and its format known: a JSONL format's text may be lines, a JSON document's is one string. */
export type TranscriptFile =
  | { readonly format: LineFormat; readonly text: TextOrLines }
  | { readonly format: Exclude<TranscriptFormat, LineFormat>; readonly text: string };

function isLineFile(file: TranscriptFile): file is Extract<TranscriptFile, { format: LineFormat }> {
  return isLineFormat(file.format);
}

/**
 * Reads a transcript file and settles its format (detected unless given); JSONL files larger than a string can
 * hold are read line by line, and a JSONL file's cut-off last line is refused or dropped (`partialLastLine`).
 * Throws `NotFoundError`, `UnknownFormatError` or `ParseError`.
 *
 * @example
 * const { format, text } = await readTranscriptFile("session.jsonl");
 */
export async function readTranscriptFile(
  path: string,
  options: ImportTranscriptFileOptions = {},
): Promise<TranscriptFile> {
  const read = await readTranscriptText(path, options);
  if (read === undefined) throw new NotFoundError("transcript file", path, "check the path");
  const chosen = validate(formatOptionSchema, options.format, "transcript format") ?? "auto";
  const { text } = read;
  if (typeof text === "string") {
    const format = chosen === "auto" ? detectFormat(text, path) : chosen;
    return isLineFormat(format)
      ? { format, text: withoutPartialLastLine(read, path, options.partialLastLine) }
      : { format, text };
  }
  // Read line by line: only formats written one record per line can be imported.
  const tooLarge = () =>
    new ParseError(
      path,
      undefined,
      `a JSONL transcript, or a JSON document of at most ${sizeInWords(options.maxTextBytes ?? MAX_TEXT_BYTES)}`,
      "the file is too large to read as one JSON document",
    );
  let format: TranscriptFormat;
  try {
    format = chosen === "auto" ? detectFormat(text.slice(0, 20).join("\n"), path) : chosen;
  } catch (error) {
    if (error instanceof UnknownFormatError) throw tooLarge();
    throw error;
  }
  if (!isLineFormat(format)) throw tooLarge();
  return { format, text: withoutPartialLastLine(read, path, options.partialLastLine) };
}

/**
 * The conversations of a transcript file already read (`readTranscriptFile`). A Claude Code subagent file's
 * `agent-<id>.meta.json` sidecar, when present, is added to the conversation's metadata as `agent`.
 *
 * @example
 * const conversations = await transcriptFileConversations(await readTranscriptFile(path), path);
 */
export async function transcriptFileConversations(
  file: TranscriptFile,
  path: string,
): Promise<ImportedConversation[]> {
  const conversations = isLineFile(file)
    ? lineImporters[file.format](file.text, path)
    : importers[file.format](file.text, path);
  if (!conversations.some((conversation) => conversation.sidechain === true)) return conversations;
  return withSubagentMetadata(conversations, path);
}

/**
 * Reads and imports a transcript file; JSONL files larger than a string can hold are read line by line. A
 * Claude Code subagent file's `agent-<id>.meta.json` sidecar, when present, is added to the conversation's
 * metadata as `agent`.
 *
 * @example
 * const [session] = await importTranscriptFile("~/.claude/projects/p/abc.jsonl");
 */
export async function importTranscriptFile(
  path: string,
  options: ImportTranscriptFileOptions = {},
): Promise<ImportedConversation[]> {
  return transcriptFileConversations(await readTranscriptFile(path, options), path);
}

/** A size for messages: bytes below a megabyte, else whole megabytes. */
function sizeInWords(bytes: number): string {
  return bytes < 1024 * 1024 ? `${bytes} bytes` : `${Math.floor(bytes / 1024 / 1024)} MB`;
}

/** Adds the `agent-<id>.meta.json` sidecar of a Claude Code subagent file to its sidechain conversations. */
async function withSubagentMetadata(
  conversations: ImportedConversation[],
  path: string,
): Promise<ImportedConversation[]> {
  const metaPath = path.replace(/\.jsonl$/i, ".meta.json");
  const meta = metaPath === path ? undefined : await readTranscriptText(metaPath);
  if (meta === undefined || typeof meta.text !== "string") return conversations;
  const agent = parseJsonDocument(
    meta.text,
    metaPath,
    "a subagent description {agentType, description}",
  ) as JsonValue;
  if (typeof agent !== "object" || agent === null || Array.isArray(agent)) {
    throw new ParseError(metaPath, 1, "a subagent description {agentType, description}", "not a JSON object");
  }
  return conversations.map((conversation) =>
    conversation.sidechain === true
      ? { ...conversation, metadata: { ...conversation.metadata, agent } }
      : conversation,
  );
}
