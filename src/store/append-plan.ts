/**
 * The backend-independent part of `appendTurn`: validation, numbering (seq, turn), ids and times, media moved
 * to blobs, title and usage. Backends read the session head inside their transaction, call `planAppend`, and
 * write what it returns.
 */
import { z } from "zod";
import { ConcurrentWriteError, ValidationError } from "../errors/errors.ts";
import type { Message, MessageInput } from "../model/message.ts";
import {
  jsonObjectSchema,
  jsonValueSchema,
  MAX_SESSION_ID_LENGTH,
  messageSchema,
  storedNameSchema,
  usageSchema,
  validate,
} from "../model/schemas.ts";
import { opensTurn } from "../model/turns.ts";
import { externalizeMedia } from "./media-blobs.ts";
import type { AppendTurnOptions, BlobData, ModelUsage } from "./session-store.ts";
import { normalizeTitle, titleFromMessages } from "./session-title.ts";
import type { StoreContext } from "./store-context.ts";
import { usageDelta, type UsageDelta } from "./usage-totals.ts";

/** What a backend knows about a session before appending to it. */
export interface SessionHead {
  readonly exists: boolean;
  readonly nextSeq: number;
  readonly turnCount: number;
  /** The stored session's owner (none for a new session or one stored without). */
  readonly owner?: string;
}

/** The rows, blobs and counters an append writes. */
export interface AppendPlan {
  readonly rows: readonly Message[];
  readonly blobs: readonly BlobData[];
  readonly nextSeq: number;
  readonly turnCount: number;
  readonly delta: UsageDelta;
  /** Title of a session this append creates. */
  readonly title: string | undefined;
  readonly now: string;
}

/** Schema of a message a caller appends (ids, seq, turn and times are filled in). */
export const messageInputSchema = messageSchema
  .omit({ id: true, sessionId: true, seq: true, turn: true, createdAt: true })
  .extend({ id: storedNameSchema.optional(), createdAt: z.string().min(1).optional() });

const modelUsageSchema = z.object({ model: z.string().optional(), usage: usageSchema });

/** Schema of `AppendTurnOptions`. */
export const appendOptionsSchema = z.object({
  expectedNextSeq: z.number().int().nonnegative().optional(),
  expectedOwner: storedNameSchema.nullable().optional(),
  session: z
    .object({
      owner: storedNameSchema.optional(),
      agent: storedNameSchema.optional(),
      title: z.string().optional(),
      metadata: jsonObjectSchema.optional(),
    })
    .optional(),
  usage: z.array(modelUsageSchema).optional(),
  // Each compaction is checked by `checkCompactionInput` where it is applied.
  compactions: z.array(z.unknown()).optional(),
  governorState: jsonValueSchema.optional(),
});

// Schemas built once: building a zod schema costs more than using it (tens of µs per append).
const sessionIdSchema = storedNameSchema.pipe(z.string().max(MAX_SESSION_ID_LENGTH));
const turnSchema = z.array(messageInputSchema).min(1, "a turn needs at least one message");
const governanceTurnSchema = z.array(messageInputSchema);

/** Validates the id of a session named by a caller. */
export function checkSessionId(sessionId: string): string {
  return validate(sessionIdSchema, sessionId, "session id");
}

/** Throws `ConcurrentWriteError` when the caller's view of the session is stale. */
export function checkExpectedSeq(sessionId: string, expected: number | undefined, actual: number): void {
  if (expected !== undefined && expected !== actual) {
    throw new ConcurrentWriteError(
      sessionId,
      `expected next seq ${expected} but the session is at ${actual} (another writer appended first)`,
    );
  }
}

/** Throws `ConcurrentWriteError` when the stored session is not the owner's the caller loaded. */
function checkExpectedOwner(sessionId: string, expected: string | null | undefined, head: SessionHead): void {
  if (expected === undefined || !head.exists || (head.owner ?? null) === expected) return;
  throw new ConcurrentWriteError(
    sessionId,
    "it is no longer the session this writer loaded (it was deleted and its id taken by another owner's session)",
  );
}

/**
 * Plans an append. Throws `ValidationError` for bad input (nothing written) and `ConcurrentWriteError` when
 * `expectedNextSeq` is stale.
 *
 * @example
 * const plan = planAppend("s1", { exists: false, nextSeq: 0, turnCount: 0 }, inputs, {}, context);
 */
export function planAppend(
  sessionId: string,
  head: SessionHead,
  inputs: readonly MessageInput[],
  options: AppendTurnOptions,
  context: StoreContext,
): AppendPlan {
  const checkedOptions = validate(appendOptionsSchema, options, "append options");
  const writesGovernance =
    (checkedOptions.compactions?.length ?? 0) > 0 || checkedOptions.governorState !== undefined;
  const checked = validate(writesGovernance ? governanceTurnSchema : turnSchema, inputs, "turn");
  checkExpectedOwner(sessionId, checkedOptions.expectedOwner, head);
  checkExpectedSeq(sessionId, checkedOptions.expectedNextSeq, head.nextSeq);
  if (!head.exists && !checked.some(opensTurn)) {
    throw new ValidationError(
      `session ${sessionId} does not exist yet; a session is created by its first user message, so start the turn with one`,
    );
  }
  const now = context.clock().toISOString();
  let turn = head.turnCount;
  const rows: Message[] = [];
  const blobs: BlobData[] = [];
  const seen = new Set<string>();
  checked.forEach((input, index) => {
    if (opensTurn(input)) turn++;
    const message = {
      ...input,
      id: input.id ?? context.ids("msg"),
      sessionId,
      seq: head.nextSeq + index,
      turn,
    };
    if (seen.has(message.id))
      throw new ValidationError(`message id "${message.id}" appears twice in the turn`);
    seen.add(message.id);
    const external = externalizeMedia(
      { ...message, createdAt: input.createdAt ?? now },
      context.inlineMediaLimit,
    );
    rows.push(external.message);
    blobs.push(...external.blobs);
  });
  const extra = (checkedOptions.usage ?? []) as ModelUsage[];
  const requestedTitle = checkedOptions.session?.title;
  return {
    rows,
    blobs,
    nextSeq: head.nextSeq + rows.length,
    turnCount: turn,
    delta: usageDelta(rows, extra, context.prices),
    title: head.exists
      ? undefined
      : requestedTitle !== undefined
        ? normalizeTitle(requestedTitle)
        : titleFromMessages(rows),
    now,
  };
}
