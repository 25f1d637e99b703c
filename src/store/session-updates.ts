import { z } from "zod";
import { NotFoundError, SessionExistsError, ValidationError } from "../errors/errors.ts";
import type { JsonValue } from "../model/message.ts";
import { jsonValueSchema, validate } from "../model/schemas.ts";
import { normalizeTitle } from "./session-title.ts";

/**
 * A new title, normalised like a prompt title. Throws `ValidationError` when it is empty.
 *
 * @example
 * checkTitle("  Release  notes "); // "Release notes"
 */
export function checkTitle(title: string): string {
  const normalized = normalizeTitle(validate(z.string(), title, "title"));
  if (normalized === undefined) throw new ValidationError("a title needs at least one visible character");
  return normalized;
}

const syncInputSchema = z.object({
  agent: z.string().min(1, "name the agent whose sync state this is"),
  cursor: jsonValueSchema,
  executorSessionId: z.string().min(1).optional(),
});

/**
 * Validates the arguments of `setSyncState`.
 *
 * @example
 * checkSyncInput("codex", 42, "exec-1");
 */
export function checkSyncInput(
  agent: string,
  cursor: JsonValue,
  executorSessionId: string | undefined,
): { agent: string; cursor: JsonValue; executorSessionId?: string } {
  const checked = validate(syncInputSchema, { agent, cursor, executorSessionId }, "sync state");
  return {
    agent: checked.agent,
    cursor: checked.cursor,
    ...(checked.executorSessionId !== undefined && { executorSessionId: checked.executorSessionId }),
  };
}

/**
 * The error for restoring over an existing session.
 *
 * @example
 * throw existingSessionError("s1");
 */
export function existingSessionError(sessionId: string): SessionExistsError {
  return new SessionExistsError(
    sessionId,
    'nothing was written; delete it first, or restore with onExisting "replace" or "skip"',
  );
}

/**
 * The error for a message id the session does not hold.
 *
 * @example
 * throw missingMessage("s1", "msg_9");
 */
export function missingMessage(sessionId: string, messageId: string): NotFoundError {
  return new NotFoundError("message", messageId, `session ${sessionId} holds no message with that id`);
}
