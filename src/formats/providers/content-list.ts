import type { ContentBlock, Message } from "../../model/message.ts";

/**
 * Metadata key set on a message whose content came as a list of parts where the exporter would send a string
 * (one text part; for OpenAI chat assistant messages also `null` or a `refusal` field), so the list goes back as
 * a list. Shared by the OpenAI chat and Responses converters: both send strings and lists alike.
 */
export const CONTENT_LIST_KEY = "openai.contentList";

/** True when `message` came with its content as a list (see `CONTENT_LIST_KEY`). */
export function cameAsList(message: Message): boolean {
  return message.metadata?.[CONTENT_LIST_KEY] === true;
}

/**
 * The metadata a user or system message imported from `content` needs to go back in the same form: the list
 * flag when `content` was a list of one text part (which would otherwise be sent as a string).
 *
 * @example
 * listMetadata([{ type: "input_text", text: "hi" }], blocks); // { "openai.contentList": true }
 * listMetadata("hi", blocks); // undefined
 */
export function listMetadata(
  content: string | readonly unknown[],
  blocks: readonly ContentBlock[],
): { [CONTENT_LIST_KEY]: true } | undefined {
  const single = blocks.length === 1 && blocks[0]!.type === "text";
  return typeof content !== "string" && single ? { [CONTENT_LIST_KEY]: true } : undefined;
}
