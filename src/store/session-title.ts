import type { Message } from "../model/message.ts";
import { opensTurn } from "../model/turns.ts";

/** Longest title kept, in characters. */
export const MAX_TITLE_LENGTH = 100;

/** Whitespace, and control characters (a NUL in a pasted prompt) read as whitespace: a title is for display. */
const whitespace = /[\s\p{Cc}]/u;

/**
 * The title of some texts read as one (whitespace collapsed, cut to 100 characters). Scans only as far as
 * the title needs and never copies the texts: a first prompt can be tens of megabytes.
 */
function titleOf(texts: Iterable<string>): string | undefined {
  const characters: string[] = [];
  let space = false;
  scan: for (const text of texts) {
    space ||= characters.length > 0;
    for (const character of text) {
      if (whitespace.test(character)) {
        space = characters.length > 0;
        continue;
      }
      if (space) characters.push(" ");
      space = false;
      characters.push(character);
      if (characters.length > MAX_TITLE_LENGTH) break scan;
    }
  }
  if (characters.length === 0) return undefined;
  if (characters.length <= MAX_TITLE_LENGTH) return characters.join("");
  return `${characters
    .slice(0, MAX_TITLE_LENGTH - 1)
    .join("")
    .trimEnd()}…`;
}

/**
 * A title: whitespace and control characters collapsed to single spaces, cut to 100 characters (ending in `…`
 * when cut). Undefined when empty.
 *
 * @example
 * normalizeTitle("  Fix   the\nbuild "); // "Fix the build"
 */
export function normalizeTitle(text: string): string | undefined {
  return titleOf([text]);
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
  if (first === undefined) return undefined;
  return titleOf(first.content.flatMap((block) => (block.type === "text" ? [block.text] : [])));
}
