import { messageText } from "../model/blocks.ts";
import type { Message } from "../model/message.ts";
import { opensTurn } from "../model/turns.ts";

/** Longest title kept, in characters. */
export const MAX_TITLE_LENGTH = 100;

/**
 * A title: whitespace collapsed, cut to 100 characters (ending in `…` when cut). Undefined when empty.
 *
 * @example
 * normalizeTitle("  Fix   the\nbuild "); // "Fix the build"
 */
export function normalizeTitle(text: string): string | undefined {
  const collapsed = text.replace(/\s+/g, " ").trim();
  if (collapsed === "") return undefined;
  const characters = [...collapsed];
  if (characters.length <= MAX_TITLE_LENGTH) return collapsed;
  return `${characters
    .slice(0, MAX_TITLE_LENGTH - 1)
    .join("")
    .trimEnd()}…`;
}

/**
 * The title of a session: the text of its first user prompt, normalised.
 *
 * @example
 * titleFromMessages([{ role: "user", content: [text("Deploy the app")] }]); // "Deploy the app"
 */
export function titleFromMessages(
  messages: readonly Pick<Message, "role" | "kind" | "content">[],
): string | undefined {
  const first = messages.find(opensTurn);
  return first === undefined ? undefined : normalizeTitle(messageText(first));
}
