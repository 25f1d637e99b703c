import type { Conversation } from "../conversation/conversation.ts";
import type { ContentBlock } from "../model/message.ts";

/** True when a message added since the last commit is an assistant message. */
export function holdsUncommittedReply(conversation: Conversation): boolean {
  return conversation.uncommitted().some((message) => message.role === "assistant");
}

/** True when `content` holds no block but blank text (an empty string, an empty list, whitespace only). */
export function isBlank(content: string | readonly ContentBlock[]): boolean {
  if (typeof content === "string") return content.trim() === "";
  return (
    Array.isArray(content) && content.every((block) => block?.type === "text" && block.text.trim() === "")
  );
}
