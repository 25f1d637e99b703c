import { toolResultText } from "../../model/blocks.ts";
import type { Message } from "../../model/message.ts";
import type { ServerLimits } from "../server-options.ts";
import { HttpError } from "../http/http-error.ts";

/** The limits on what the server replays (`ServerLimits.maxReplayMessages`, `maxReplayCharacters`). */
export type ReplayLimits = Pick<ServerLimits, "maxReplayMessages" | "maxReplayCharacters">;

function tooLarge(id: string, size: string): HttpError {
  return new HttpError(
    422,
    "session_too_large",
    `session "${id}" is too large for the inspector to replay (${size}); replay it offline instead: download it ` +
      `with GET /v1/sessions/${encodeURIComponent(id)}/export (or \`ctxkit sessions export\`) and run ` +
      "`ctxkit replay <file>` on it, or raise the server's maxReplayMessages/maxReplayCharacters limits",
  );
}

/** Characters of a message's stored text: texts, reasoning, tool inputs and outputs (media count nothing). */
function textCharacters(message: Message): number {
  let characters = 0;
  for (const block of message.content) {
    if (block.type === "text" || block.type === "reasoning") characters += block.text.length;
    else if (block.type === "tool-call") characters += JSON.stringify(block.input ?? null).length;
    else if (block.type === "tool-result") characters += toolResultText(block.content).length;
  }
  return characters;
}

/**
 * Refuses, before anything is loaded, a session with more stored messages than the server replays: a 422
 * `session_too_large` that says how to inspect it instead (the replay runs on the server's event loop).
 *
 * @example
 * checkReplayMessages(id, record.messageCount, context.limits);
 */
export function checkReplayMessages(id: string, messageCount: number, limits: ReplayLimits): void {
  if (messageCount > limits.maxReplayMessages) {
    throw tooLarge(
      id,
      `${messageCount} stored messages, over the server's limit of ${limits.maxReplayMessages}`,
    );
  }
}

/**
 * Refuses a loaded session whose messages hold more text than the server replays (422 `session_too_large`);
 * returns the characters it holds.
 *
 * @example
 * checkReplayCharacters(id, messages, context.limits);
 */
export function checkReplayCharacters(
  id: string,
  messages: readonly Message[],
  limits: ReplayLimits,
): number {
  let characters = 0;
  for (const message of messages) characters += textCharacters(message);
  if (characters > limits.maxReplayCharacters) {
    throw tooLarge(
      id,
      `${characters} characters of stored text, over the server's limit of ${limits.maxReplayCharacters}`,
    );
  }
  return characters;
}
