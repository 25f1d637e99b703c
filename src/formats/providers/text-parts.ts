import type { Message } from "../../model/message.ts";

/**
 * Metadata key under which a tool message imported from a list of text parts keeps their lengths, so the parts
 * can be sent back as they were (ctxkit holds a tool result's text as one string, parts joined by newlines).
 */
export const TEXT_PARTS_KEY = "toolResult.textParts";

/**
 * Joins the text parts of a tool result with newlines, with the metadata that lets `splitTextParts` cut them
 * apart again — only when `textLayout` would not rebuild the same parts without it.
 *
 * @example
 * joinTextParts(["report", "agentId: a1"], false); // { text: "report\nagentId: a1", metadata: { "toolResult.textParts": [6, 11] } }
 */
export function joinTextParts(
  texts: readonly string[],
  hasAttachments: boolean,
): { text: string; metadata?: { [TEXT_PARTS_KEY]: number[] } } {
  const text = texts.join("\n");
  const rebuilt = hasAttachments && (text === "" ? texts.length === 0 : texts.length === 1);
  return rebuilt ? { text } : { text, metadata: { [TEXT_PARTS_KEY]: texts.map((part) => part.length) } };
}

/**
 * The text parts `text` was joined from, when `message` recorded them and `text` still matches the record (a
 * governed, rewritten result no longer does); otherwise `undefined`.
 *
 * @example
 * splitTextParts("report\nagentId: a1", message); // ["report", "agentId: a1"]
 */
export function splitTextParts(text: string, message: Message): string[] | undefined {
  const lengths = message.metadata?.[TEXT_PARTS_KEY];
  if (!Array.isArray(lengths) || !lengths.every((length) => typeof length === "number")) return undefined;
  const parts: string[] = [];
  let at = 0;
  for (const [index, length] of lengths.entries()) {
    if (index > 0) {
      if (text[at] !== "\n") return undefined;
      at++;
    }
    parts.push(text.slice(at, at + length));
    at += length;
  }
  return at === text.length ? parts : undefined;
}

/**
 * How a tool result's text is laid out in formats that take a string or a list: the string itself when it was
 * not imported from a list and has no attachments, else the list of text parts (recorded parts when they still
 * match, the whole text otherwise, nothing for an empty text).
 *
 * @example
 * textLayout("a b", message, false); // "a b"
 */
export function textLayout(text: string, message: Message, hasAttachments: boolean): string | string[] {
  const parts = splitTextParts(text, message);
  if (parts !== undefined) return parts;
  if (!hasAttachments) return text;
  return text === "" ? [] : [text];
}
