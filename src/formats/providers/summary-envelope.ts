import type { ContentBlock } from "../../model/message.ts";

/** Opening tag put before each text block of a summary message sent to a provider. */
export const SUMMARY_OPEN = "<conversation-summary>\n";
/** Closing tag put after each text block of a summary message sent to a provider. */
export const SUMMARY_CLOSE = "\n</conversation-summary>";

/**
 * The blocks of a summary message as sent to a provider: each text block wrapped in `<conversation-summary>`
 * tags, so the model reads it as a summary and `unwrapSummary` can recognise it on the way back.
 *
 * @example
 * wrapSummary([{ type: "text", text: "We fixed the parser." }]);
 * // [{ type: "text", text: "<conversation-summary>\nWe fixed the parser.\n</conversation-summary>" }]
 */
export function wrapSummary(blocks: readonly ContentBlock[]): ContentBlock[] {
  return blocks.map((block) =>
    block.type === "text" ? { type: "text", text: `${SUMMARY_OPEN}${block.text}${SUMMARY_CLOSE}` } : block,
  );
}

function isWrapped(text: string): boolean {
  return (
    text.length >= SUMMARY_OPEN.length + SUMMARY_CLOSE.length &&
    text.startsWith(SUMMARY_OPEN) &&
    text.endsWith(SUMMARY_CLOSE)
  );
}

/**
 * The original blocks of a user message that `wrapSummary` produced (every text block wrapped, at least one
 * text block), or `undefined` when the message is not a wrapped summary.
 *
 * @example
 * unwrapSummary(wrapSummary(blocks)); // equals blocks
 */
export function unwrapSummary(blocks: readonly ContentBlock[]): ContentBlock[] | undefined {
  const texts = blocks.filter((block) => block.type === "text");
  if (texts.length === 0 || !texts.every((block) => isWrapped(block.text))) return undefined;
  return blocks.map((block) =>
    block.type === "text"
      ? {
          type: "text",
          text: block.text.slice(SUMMARY_OPEN.length, block.text.length - SUMMARY_CLOSE.length),
        }
      : block,
  );
}
