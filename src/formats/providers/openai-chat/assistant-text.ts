import type { JsonValue, Message, TextBlock } from "../../../model/message.ts";
import { cameAsList, CONTENT_LIST_KEY } from "../content-list.ts";
import type {
  OpenAIChatAssistantMessage,
  OpenAIChatRefusalPart,
  OpenAIChatTextPart,
} from "./openai-chat-message.ts";

/** Metadata key under which an assistant message keeps its `annotations` (URL citations of web search). */
export const ANNOTATIONS_KEY = "openai.annotations";

/** True when `assistantText` sends these text blocks as a list of parts without being told to. */
function sentAsList(blocks: readonly TextBlock[]): boolean {
  const refusals = blocks.filter((block) => block.refusal === true).length;
  const texts = blocks.length - refusals;
  return refusals === 0 ? texts > 1 : !(texts === 0 && refusals === 1);
}

/**
 * The metadata an assistant message imported from a `content` list needs to go back as a list (see
 * `CONTENT_LIST_KEY`), or `undefined` when it is sent as a list anyway.
 */
export function contentListMetadata(blocks: readonly TextBlock[]): { [CONTENT_LIST_KEY]: true } | undefined {
  return sentAsList(blocks) ? undefined : { [CONTENT_LIST_KEY]: true };
}

/**
 * The `content` and `refusal` of an assistant message from its text blocks: one text is a string, several a list
 * of text parts; a lone refusal goes in the `refusal` field (with `content: null`, as OpenAI returns it), a
 * refusal beside text is a `refusal` part. `hasToolCalls` decides between `null` and `""` for no text. A message
 * imported from a list (see `CONTENT_LIST_KEY`) always gets a list.
 *
 * @example
 * assistantText([{ type: "text", text: "No.", refusal: true }], message, false); // { content: null, refusal: "No." }
 */
export function assistantText(
  blocks: readonly TextBlock[],
  message: Message,
  hasToolCalls: boolean,
): Pick<OpenAIChatAssistantMessage, "content" | "refusal"> {
  const list = cameAsList(message) || sentAsList(blocks);
  if (list)
    return {
      content: blocks.map((block): OpenAIChatTextPart | OpenAIChatRefusalPart =>
        block.refusal === true
          ? { type: "refusal", refusal: block.text }
          : { type: "text", text: block.text },
      ),
    };
  const only = blocks[0];
  if (only === undefined) return { content: hasToolCalls ? null : "" };
  return only.refusal === true ? { content: null, refusal: only.text } : { content: only.text };
}

/** The `annotations` an assistant message was imported with, to send back. */
export function storedAnnotations(message: Message): { annotations?: JsonValue[] } {
  const annotations = message.metadata?.[ANNOTATIONS_KEY];
  return Array.isArray(annotations) ? { annotations } : {};
}
