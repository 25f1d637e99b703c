import { ParseError } from "../../errors/errors.ts";
import { textLines, type TextOrLines } from "../text-lines.ts";

/** One parsed line of a JSONL file. */
export interface JsonLine {
  /** 1-based line number in the file. */
  readonly line: number;
  readonly value: unknown;
}

/**
 * Parses JSON Lines (a text, or its lines): one JSON value per line, blank lines skipped, `\r\n` accepted. A
 * line that is not JSON raises a `ParseError` naming the file and the line.
 *
 * @example
 * parseJsonLines('{"a":1}\n{"a":2}\n', "log.jsonl").map((entry) => entry.line); // [1, 2]
 */
export function parseJsonLines(
  text: TextOrLines,
  source: string,
  expected = "one JSON object per line",
): JsonLine[] {
  const parsed: JsonLine[] = [];
  let number = 0;
  for (const raw of textLines(text)) {
    number++;
    const line = raw.trim();
    if (line === "") continue;
    try {
      parsed.push({ line: number, value: JSON.parse(line) });
    } catch (error) {
      throw new ParseError(source, number, expected, `invalid JSON (${jsonErrorDetail(error)})`, {
        cause: error,
      });
    }
  }
  return parsed;
}

/**
 * Parses a whole JSON document; a syntax error raises a `ParseError` with the line it occurred on.
 *
 * @example
 * parseJsonDocument('{"messages": []}', "session.json", "a JSON object");
 */
export function parseJsonDocument(text: string, source: string, expected: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ParseError(
      source,
      lineOfJsonError(text, error),
      expected,
      `invalid JSON (${jsonErrorDetail(error)})`,
      {
        cause: error,
      },
    );
  }
}

function jsonErrorDetail(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  // V8 quotes the text around the error, which can be a whole line of data: keep the reason only.
  return message
    .replace(/, (\.\.\.)?".*"(\.\.\.)? is not valid JSON$/s, "")
    .replace(/ at position \d+.*$/s, "");
}

function lineOfJsonError(text: string, error: unknown): number | undefined {
  const message = error instanceof Error ? error.message : "";
  const reported = /\(line (\d+) column \d+\)/.exec(message);
  if (reported) return Number(reported[1]);
  const position = positionOfJsonError(text, message);
  if (position === undefined) return undefined;
  let line = 1;
  for (let index = 0; index < position; index++) if (text.charCodeAt(index) === 10) line++;
  return line;
}

/** Where V8 found the error: stated, at the end of the input, or found from the context it quotes. */
function positionOfJsonError(text: string, message: string): number | undefined {
  const stated = /at position (\d+)/.exec(message);
  if (stated) return Math.min(Number(stated[1]), text.length);
  if (message.startsWith("Unexpected end of JSON input")) return text.length;
  // "Unexpected token 'x', ..."<20 characters around the error>"... is not valid JSON": the quoted context
  // starts 10 characters before the error when it was cut ("..." before it).
  const quoted = /^Unexpected token '(.+?)', (\.\.\.)?"(.*)"(?:\.\.\.)? is not valid JSON$/s.exec(message);
  if (!quoted) return undefined;
  const [, token, cut, context] = quoted;
  const start = text.indexOf(context!);
  if (start < 0) return undefined;
  return start + (cut ? 10 : Math.max(0, context!.indexOf(token!)));
}
