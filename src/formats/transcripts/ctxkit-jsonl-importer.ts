import { ParseError } from "../../errors/errors.ts";
import type { TextOrLines } from "../text-lines.ts";
import type { Message } from "../../model/message.ts";
import { readCtxkitJsonl } from "../ctxkit-jsonl/read-ctxkit-jsonl.ts";
import type { CtxkitConversationRecord } from "../ctxkit-jsonl/ctxkit-jsonl-records.ts";
import {
  isTranscriptFormat,
  TRANSCRIPT_FORMATS,
  type ImportedConversation,
} from "./imported-conversation.ts";

interface Collected {
  record: CtxkitConversationRecord | undefined;
  readonly messages: Message[];
}

/**
 * Imports a ctxkit JSONL export: one conversation per `conversation` record, holding the messages whose
 * `sessionId` is its id. Messages with no conversation record (e.g. a store's session export) form a
 * conversation of format `ctxkit` named after their session. Exporting the result gives back the same bytes.
 *
 * @example
 * const conversations = importCtxkitJsonl(readFileSync(path, "utf8"), path);
 */
export function importCtxkitJsonl(text: TextOrLines, source: string): ImportedConversation[] {
  const collected = new Map<string, Collected>();
  const entry = (id: string): Collected => {
    let found = collected.get(id);
    if (!found) collected.set(id, (found = { record: undefined, messages: [] }));
    return found;
  };
  for (const { line, record } of readCtxkitJsonl(text, source)) {
    if (record.type === "message") entry(record.message.sessionId).messages.push(record.message);
    else if (record.type === "conversation") {
      if (!isTranscriptFormat(record.format)) {
        throw new ParseError(
          source,
          line,
          `a format among ${TRANSCRIPT_FORMATS.join(", ")}`,
          `unknown format "${record.format}"`,
        );
      }
      const found = entry(record.id);
      if (found.record)
        throw new ParseError(
          source,
          line,
          "one conversation record per id",
          `conversation "${record.id}" is declared twice`,
        );
      found.record = record;
    }
  }
  return [...collected].map(([id, { record, messages }]): ImportedConversation => {
    if (!record) return { id, format: "ctxkit", source, messages };
    return {
      id,
      format: record.format as ImportedConversation["format"],
      source: record.source,
      ...(record.title !== undefined ? { title: record.title } : {}),
      messages,
      ...(record.sidechain !== undefined ? { sidechain: record.sidechain } : {}),
      ...(record.metadata !== undefined ? { metadata: record.metadata } : {}),
    };
  });
}
