/**
 * OpenAI chat tool messages hold only text, so images or files a tool returned travel in a user message right
 * after the block of tool messages, opened by this note naming the call. `fromOpenAIChat` reattaches them.
 *
 * @example
 * toolAttachmentsNote("call_1"); // "[attachments of tool call call_1]"
 */
export function toolAttachmentsNote(callId: string): string {
  return `[attachments of tool call ${callId}]`;
}

/** The call id an attachments note names, or `undefined` when `text` is not such a note. */
export function parseToolAttachmentsNote(text: string): string | undefined {
  const match = /^\[attachments of tool call (.+)\]$/s.exec(text);
  return match?.[1];
}
