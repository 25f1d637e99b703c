import type { Message } from "../../../model/message.ts";
import { messageSchema, validate } from "../../../model/schemas.ts";
import { exportCtxkitJsonl } from "../../ctxkit-jsonl/write-ctxkit-jsonl.ts";
import { importCtxkitJsonl } from "../../transcripts/ctxkit-jsonl-importer.ts";

/**
 * `messages` as a store keeps them: validated by the stored-message schema (which drops unknown fields), then
 * written to ctxkit JSONL (the dump format) and read back. A field the model gained but a schema or the JSONL
 * writer does not know is missing from the result.
 *
 * @example
 * expect(storedForm(messages)).toEqual(messages);
 */
export function storedForm(messages: readonly Message[]): Message[] {
  const validated = messages.map((message) => validate(messageSchema, message, "message") as Message);
  const sessionId = validated[0]?.sessionId ?? "s1";
  const text = exportCtxkitJsonl([{ id: sessionId, format: "ctxkit", source: "test", messages: validated }]);
  return importCtxkitJsonl(text, "test.jsonl").flatMap((conversation) => conversation.messages);
}
