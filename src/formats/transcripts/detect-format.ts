import { UnknownFormatError } from "../../errors/errors.ts";
import type { TranscriptFormat } from "./imported-conversation.ts";

/** Record types that only Claude Code session files use on their first lines. */
const claudeRecordTypes = new Set([
  "user",
  "assistant",
  "system",
  "summary",
  "progress",
  "file-history-snapshot",
  "queue-operation",
  "attachment",
  "permission-mode",
  "last-prompt",
  "custom-title",
  "ai-title",
  "agent-name",
  "tag",
]);

/** How many leading lines to try when the first line of a JSONL file is damaged. */
const linesToSniff = 20;

type JsonObject = Record<string, unknown>;

/**
 * Recognises a transcript's format from its content (the file name only breaks ties for damaged `.traj`
 * files). Throws `UnknownFormatError` when nothing matches.
 *
 * @example
 * detectFormat(readFileSync(path, "utf8"), path); // "claude-code"
 */
export function detectFormat(text: string, source: string): TranscriptFormat {
  const lines = leadingLines(text, linesToSniff);
  const firstLine = parseObject(lines[0] ?? "");
  const fromFirstLine = firstLine && jsonlFormatOf(firstLine);
  if (fromFirstLine) return fromFirstLine;
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    // A JSONL file whose first line is damaged: the next lines still tell the format, and the importer then
    // reports the damaged line.
    for (const line of lines.slice(1)) {
      const value = parseObject(line);
      const format = value && jsonlFormatOf(value);
      if (format) return format;
    }
    if (/\.traj$/i.test(source)) return "swe-agent";
    throw new UnknownFormatError(source);
  }
  const format = documentFormatOf(document);
  if (format) return format;
  throw new UnknownFormatError(source);
}

function jsonlFormatOf(record: JsonObject): TranscriptFormat | undefined {
  const type = record["type"];
  if (typeof type !== "string") return undefined;
  if (type === "ctxkit") return "ctxkit";
  if (isObject(record["payload"]) && "timestamp" in record) return "codex";
  if ("uuid" in record || "sessionId" in record || claudeRecordTypes.has(type)) return "claude-code";
  return undefined;
}

function documentFormatOf(document: unknown): TranscriptFormat | undefined {
  if (Array.isArray(document)) {
    const head: unknown = document[0];
    if (head === undefined) return "openai";
    if (isObject(head) && (Array.isArray(head["traj"]) || typeof head["role"] === "string")) return "openai";
    return undefined;
  }
  if (!isObject(document)) return undefined;
  if (Array.isArray(document["history"])) return "swe-agent";
  const messages = document["messages"];
  if (!Array.isArray(messages)) return undefined;
  const head: unknown = messages[0];
  const geminiShaped = isObject(head) && (head["type"] === "user" || head["type"] === "gemini");
  if ("sessionId" in document || "projectHash" in document || geminiShaped) return "gemini-cli";
  return "openai";
}

function leadingLines(text: string, count: number): string[] {
  const lines: string[] = [];
  let start = 0;
  while (lines.length < count && start < text.length) {
    const newline = text.indexOf("\n", start);
    const end = newline === -1 ? text.length : newline;
    const line = text.slice(start, end).trim();
    if (line !== "") lines.push(line);
    start = end + 1;
  }
  return lines;
}

function parseObject(line: string): JsonObject | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    const value: unknown = JSON.parse(line);
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
