import { z } from "zod";
import { ParseError, SchemaTooNewError } from "../../errors/errors.ts";
import { textLines, type TextOrLines } from "../text-lines.ts";
import type { Message } from "../../model/message.ts";
import { jsonObjectSchema, messageSchema } from "../../model/schemas.ts";
import {
  CTXKIT_JSONL_RECORD_TYPES,
  CTXKIT_JSONL_VERSION,
  PASS_THROUGH_RECORD_TYPES,
  type CtxkitConversationRecord,
  type CtxkitJsonlLine,
  type CtxkitRecord,
} from "./ctxkit-jsonl-records.ts";
import { conversationRecordKeys, orderedMessage, pick } from "./serialize-message.ts";

const headerSchema = z.looseObject({ type: z.literal("ctxkit"), version: z.number().int().positive() });

const conversationSchema = z.object({
  type: z.literal("conversation"),
  id: z.string().min(1),
  format: z.string().min(1),
  source: z.string(),
  title: z.string().optional(),
  sidechain: z.boolean().optional(),
  metadata: jsonObjectSchema.optional(),
});

const expectedHeader = `a header line {"type":"ctxkit","version":${CTXKIT_JSONL_VERSION}}`;

/**
 * Reads ctxkit JSONL (a text, or its lines) line by line, yielding each record with its line number. The header must come first;
 * a file written by a newer ctxkit raises `SchemaTooNewError`. Message lines are validated against the
 * message schema; `session` and `blob` lines are yielded as written, for the store to interpret. Any
 * malformed line raises a `ParseError` naming the file, the line and what was expected.
 *
 * @example
 * for (const { record } of readCtxkitJsonl(text, "export.jsonl"))
 *   if (record.type === "message") console.log(record.message.role);
 */
export function* readCtxkitJsonl(text: TextOrLines, source: string): Generator<CtxkitJsonlLine> {
  let lineNumber = 0;
  let headerSeen = false;
  for (const raw of textLines(text)) {
    const line = raw.trim();
    lineNumber++;
    if (line === "") continue;
    const record = parseRecord(line, source, lineNumber, headerSeen);
    headerSeen = true;
    yield { line: lineNumber, record };
  }
  if (!headerSeen) throw new ParseError(source, 1, expectedHeader, "the file is empty");
}

function parseRecord(line: string, source: string, lineNumber: number, headerSeen: boolean): CtxkitRecord {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    throw new ParseError(source, lineNumber, "one JSON object per line", "invalid JSON", { cause: error });
  }
  const type =
    typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as { type?: unknown }).type
      : undefined;
  // Records are validated with zod but returned as parsed: zod rebuilds objects and would drop "__proto__"
  // keys of free-form JSON (tool inputs, metadata), breaking byte-identical round trips.
  if (!headerSeen || type === "ctxkit") return parseHeader(value, source, lineNumber);
  if (type === "message") {
    const { type: _type, ...fields } = value as Record<string, unknown>;
    expectRecord(messageSchema, fields, source, lineNumber, "a message record");
    return { type: "message", message: orderedMessage(fields as unknown as Message) as unknown as Message };
  }
  if (type === "conversation") {
    expectRecord(
      conversationSchema,
      value,
      source,
      lineNumber,
      "a conversation record {type, id, format, source}",
    );
    return pick(value as object, conversationRecordKeys) as unknown as CtxkitConversationRecord;
  }
  if ((PASS_THROUGH_RECORD_TYPES as readonly unknown[]).includes(type)) {
    expectRecord(jsonObjectSchema, value, source, lineNumber, "a JSON object");
    return value as CtxkitRecord;
  }
  throw new ParseError(
    source,
    lineNumber,
    `a record whose type is one of ${CTXKIT_JSONL_RECORD_TYPES.join(", ")}`,
    `unknown record type ${JSON.stringify(type ?? null)}`,
  );
}

function parseHeader(value: unknown, source: string, lineNumber: number): CtxkitRecord {
  const header = expectRecord(headerSchema, value, source, lineNumber, expectedHeader);
  if (header.version > CTXKIT_JSONL_VERSION)
    throw new SchemaTooNewError(header.version, CTXKIT_JSONL_VERSION, source);
  return value as CtxkitRecord;
}

function expectRecord<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  source: string,
  line: number,
  expected: string,
): z.output<Schema> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue?.path.map(String).join(".") || "record";
  throw new ParseError(source, line, expected, `${path}: ${issue?.message ?? "invalid"}`);
}
