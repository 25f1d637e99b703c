import type { ContentBlock, Message } from "../../model/message.ts";

/**
 * Metadata key set on a message whose content came as a list of parts where the exporter would send a string
 * (one text part; for OpenAI chat assistant messages also `null` or a `refusal` field), so the list goes back as
 * a list. Shared by the OpenAI chat and Responses converters: both send strings and lists alike. Other formats
 * record the same fact under their own key (the `key` argument of `listMetadata` and `cameAsList`).
 */
export const CONTENT_LIST_KEY = "openai.contentList";

/** True when `message` came with its content as a list (see `CONTENT_LIST_KEY`), as recorded under `key`. */
export function cameAsList(message: Message, key: string = CONTENT_LIST_KEY): boolean {
  return message.metadata?.[key] === true;
}

/**
 * The metadata a message imported from `content` needs to go back in the same form: the list flag (under `key`,
 * `CONTENT_LIST_KEY` by default) when `content` was a list of one text part (which would otherwise be sent as a
 * string).
 *
 * @example
 * listMetadata([{ type: "input_text", text: "hi" }], blocks); // { "openai.contentList": true }
 * listMetadata([{ type: "text", text: "hi" }], blocks, "aiSdk.contentList"); // { "aiSdk.contentList": true }
 * listMetadata("hi", blocks); // undefined
 */
export function listMetadata<Key extends string = typeof CONTENT_LIST_KEY>(
  content: string | readonly unknown[],
  blocks: readonly ContentBlock[],
  key: Key = CONTENT_LIST_KEY as Key,
): { [K in Key]: true } | undefined {
  const single = blocks.length === 1 && blocks[0]!.type === "text";
  return typeof content !== "string" && single ? ({ [key]: true } as { [K in Key]: true }) : undefined;
}
