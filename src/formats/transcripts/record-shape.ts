import type { z } from "zod";
import { ParseError } from "../../errors/errors.ts";

/** Where a record sits in its file, for error messages. */
export interface RecordLocation {
  readonly source: string;
  /** 1-based line (JSONL formats); absent for whole-document formats. */
  readonly line?: number | undefined;
  /** Path inside a JSON document, e.g. `messages[3]`. */
  readonly path?: string | undefined;
}

/**
 * Checks a transcript record against the slice of its shape an importer reads. On mismatch throws a
 * `ParseError` naming the file, the line, what was expected and which field was wrong.
 *
 * @example
 * const record = expectShape(recordSchema, value, { source, line }, "a Codex rollout record");
 */
export function expectShape<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  location: RecordLocation,
  expected: string,
): z.output<Schema> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = [location.path, ...(issue?.path.map(String) ?? [])].filter(Boolean).join(".");
  const detail = `${field === "" ? "record" : field}: ${issue?.message ?? "invalid"}`;
  throw new ParseError(location.source, location.line, expected, detail);
}
