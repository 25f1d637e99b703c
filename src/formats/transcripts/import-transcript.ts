import { readFile } from "node:fs/promises";
import { z } from "zod";
import { NotFoundError, ParseError } from "../../errors/errors.ts";
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
import { importSweAgent } from "./swe-agent-importer.ts";

/** Options of `importTranscript`. */
export interface ImportTranscriptOptions {
  /** Names the transcript in ids and errors; usually the file path. */
  readonly source: string;
  /** The format, or `auto` (default) to detect it. */
  readonly format?: TranscriptFormat | "auto" | undefined;
}

const formatOptionSchema = z.enum([...TRANSCRIPT_FORMATS, "auto"]).optional();

const importers: Readonly<
  Record<TranscriptFormat, (text: string, source: string) => ImportedConversation[]>
> = {
  "claude-code": importClaudeCode,
  codex: importCodex,
  "gemini-cli": importGeminiCli,
  openai: importOpenAiChat,
  "swe-agent": importSweAgent,
  ctxkit: importCtxkitJsonl,
};

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

/**
 * Reads and imports a transcript file. A Claude Code subagent file's `agent-<id>.meta.json` sidecar, when
 * present, is added to the conversation's metadata as `agent`.
 *
 * @example
 * const [session] = await importTranscriptFile("~/.claude/projects/p/abc.jsonl");
 */
export async function importTranscriptFile(
  path: string,
  options: { readonly format?: TranscriptFormat | "auto" | undefined } = {},
): Promise<ImportedConversation[]> {
  const text = await readText(path);
  if (text === undefined) throw new NotFoundError("transcript file", path, "check the path");
  const conversations = importTranscript(text, { source: path, format: options.format });
  if (!conversations.some((conversation) => conversation.sidechain === true)) return conversations;
  const metaPath = path.replace(/\.jsonl$/i, ".meta.json");
  const metaText = metaPath === path ? undefined : await readText(metaPath);
  if (metaText === undefined) return conversations;
  const agent = parseJsonDocument(
    metaText,
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

/** The file's text, or undefined when it does not exist. */
async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw error;
  }
}
