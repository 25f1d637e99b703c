import type { Message } from "../../../model/message.ts";

/**
 * Metadata key marking a user message whose `content` came as a list of one text part, which `toAiSdk` would
 * otherwise send as the equivalent string (set with `listMetadata`, read with `cameAsList`).
 */
export const AI_SDK_CONTENT_LIST_KEY = "aiSdk.contentList";

/**
 * Metadata key marking an assistant message whose `content` came as a string. `toAiSdk` sends assistant content
 * as a list of parts, the form of the AI SDK's own response messages, so only a string needs recording.
 */
export const AI_SDK_CONTENT_STRING_KEY = "aiSdk.contentString";

/**
 * The metadata an assistant message imported from `content` needs to go back as a string, or `undefined` when
 * it came as a list.
 *
 * @example
 * stringMetadata("Done."); // { "aiSdk.contentString": true }
 * stringMetadata([{ type: "text", text: "Done." }]); // undefined
 */
export function stringMetadata(
  content: string | readonly unknown[],
): { [AI_SDK_CONTENT_STRING_KEY]: true } | undefined {
  return typeof content === "string" ? { [AI_SDK_CONTENT_STRING_KEY]: true } : undefined;
}

/**
 * The string an assistant message imported from a string goes back as: its one text (`""` for no content), or
 * `undefined` when it was a list or its content no longer fits in a string (several blocks, or not text).
 *
 * @example
 * assistantString(message); // "Done." for a message imported from { role: "assistant", content: "Done." }
 */
export function assistantString(message: Message): string | undefined {
  if (message.metadata?.[AI_SDK_CONTENT_STRING_KEY] !== true) return undefined;
  const [only, ...rest] = message.content;
  if (only === undefined) return "";
  return rest.length === 0 && only.type === "text" ? only.text : undefined;
}
