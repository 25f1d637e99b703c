// Working context, measured on the recorded edits: could the agent have made each of its edits from the view a
// policy sent? An edit names the exact text it replaces (Claude Code's Edit and MultiEdit `old_string`); the
// agent had seen that text in its ungoverned history. When governance had taken it out of the view, the agent
// would first have had to read the file again — a request the open-loop replay cannot see or price.
import { stringLeaves } from "../../src/metrics/facts.ts";
import { toolResultText } from "../../src/model/blocks.ts";
import type { JsonValue, Message } from "../../src/model/message.ts";

/** Anchors shorter than this are too common to tell anything. */
const MIN_ANCHOR_CHARS = 20;

/** Line-number gutters of file reads (`   12→`) are not part of the text an edit quotes. */
function normalise(text: string): string {
  return text
    .split("\n")
    .map((line) => line.replace(/^\s*\d+→/, "").trim())
    .filter((line) => line !== "")
    .join("\n");
}

function oldStrings(input: JsonValue): string[] {
  if (input === null || typeof input !== "object" || Array.isArray(input)) return [];
  const found: string[] = [];
  if (typeof input["old_string"] === "string") found.push(input["old_string"]);
  const edits = input["edits"];
  if (Array.isArray(edits)) {
    for (const edit of edits) {
      if (
        edit !== null &&
        typeof edit === "object" &&
        !Array.isArray(edit) &&
        typeof edit["old_string"] === "string"
      )
        found.push(edit["old_string"]);
    }
  }
  return found;
}

/** Counts, over a replay, the edit anchors the ungoverned history showed and how many the governed view kept. */
export class EditAnchorTracker {
  #seen = 0;
  #kept = 0;
  readonly #texts = new WeakMap<Message, string>();

  /** Edits whose anchor the ungoverned history showed. */
  get seen(): number {
    return this.#seen;
  }

  /** Of those, the edits whose anchor was in the governed view. */
  get kept(): number {
    return this.#kept;
  }

  /** One request: the history before it, the view sent, and the reply the recorded agent gave. */
  observe(history: readonly Message[], view: readonly Message[], reply: readonly Message[]): void {
    const anchors = reply
      .flatMap((message) => message.content)
      .flatMap((block) => (block.type === "tool-call" ? oldStrings(block.input) : []))
      .map(normalise)
      .filter((anchor) => anchor.length >= MIN_ANCHOR_CHARS);
    if (anchors.length === 0) return;
    const everything = this.#textOf(history);
    const sent = this.#textOf(view);
    for (const anchor of anchors) {
      if (!everything.includes(anchor)) continue;
      this.#seen++;
      if (sent.includes(anchor)) this.#kept++;
    }
  }

  #textOf(messages: readonly Message[]): string {
    return messages
      .map((message) => {
        let text = this.#texts.get(message);
        if (text === undefined) {
          const parts = message.content.map((block) =>
            block.type === "text"
              ? block.text
              : block.type === "tool-result"
                ? toolResultText(block.content)
                : block.type === "tool-call"
                  ? stringLeaves(block.input).join("\n")
                  : "",
          );
          text = normalise(parts.join("\n"));
          this.#texts.set(message, text);
        }
        return text;
      })
      .join("\n");
  }
}
