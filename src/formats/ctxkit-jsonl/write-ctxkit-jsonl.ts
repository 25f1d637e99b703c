import { ValidationError } from "../../errors/errors.ts";
import type { JsonValue, Message } from "../../model/message.ts";
import { messageSchema, validate } from "../../model/schemas.ts";
import {
  CTXKIT_JSONL_VERSION,
  type CtxkitConversationRecord,
  type CtxkitRecord,
} from "./ctxkit-jsonl-records.ts";
import { conversationRecordKeys, orderedMessage, pick } from "./serialize-message.ts";

/**
 * One record as one JSONL line (no trailing newline). Messages and conversation records are written with
 * their fields in a fixed order; header, `session` and `blob` records are written as given.
 *
 * @example
 * stream.write(`${formatCtxkitRecord({ type: "message", message })}\n`);
 */
export function formatCtxkitRecord(record: CtxkitRecord): string {
  if (record.type === "message")
    return JSON.stringify({ type: "message", ...orderedMessage(record.message) });
  if (record.type === "conversation") return JSON.stringify(pick(record, conversationRecordKeys));
  return JSON.stringify(record);
}

/** A conversation to export: an `ImportedConversation`, or anything with the same fields. */
export interface ExportableConversation {
  readonly id: string;
  readonly format: string;
  readonly source: string;
  readonly title?: string | undefined;
  readonly sidechain?: boolean | undefined;
  readonly metadata?: { readonly [key: string]: JsonValue } | undefined;
  readonly messages: readonly Message[];
}

/**
 * Writes conversations as ctxkit JSONL: the header line, then per conversation a `conversation` line and one
 * `message` line per message. Every message is validated first (a `ValidationError` names the bad one), so a
 * written file always reads back; reading it and exporting again gives the same bytes.
 *
 * @example
 * writeFileSync("session.ctxkit.jsonl", exportCtxkitJsonl(importTranscript(text, { source })));
 */
export function exportCtxkitJsonl(
  conversations: readonly ExportableConversation[],
  headerFields: { readonly [key: string]: JsonValue } = {},
): string {
  const { type: _type, version: _version, ...extraHeaderFields } = headerFields;
  const lines = [formatCtxkitRecord({ type: "ctxkit", version: CTXKIT_JSONL_VERSION, ...extraHeaderFields })];
  for (const conversation of conversations) {
    const record: CtxkitConversationRecord = {
      type: "conversation",
      id: conversation.id,
      format: conversation.format,
      source: conversation.source,
      ...(conversation.title !== undefined ? { title: conversation.title } : {}),
      ...(conversation.sidechain !== undefined ? { sidechain: conversation.sidechain } : {}),
      ...(conversation.metadata !== undefined ? { metadata: conversation.metadata } : {}),
    };
    lines.push(formatCtxkitRecord(record));
    for (const message of conversation.messages) {
      validate(messageSchema, message, `message ${message.id} of conversation ${conversation.id}`);
      if (message.sessionId !== conversation.id) {
        throw new ValidationError(
          `message ${message.id} has sessionId "${message.sessionId}" but is exported in conversation "${conversation.id}"; ` +
            "give every message its conversation's id as sessionId",
        );
      }
      lines.push(formatCtxkitRecord({ type: "message", message }));
    }
  }
  return `${lines.join("\n")}\n`;
}
