/**
 * The backend-independent part of `applyCompaction`: which visible rows a summary replaces, and the summary
 * row itself (a fresh seq, the position of the first row it replaces, the turn of the row before it).
 */
import { z } from "zod";
import { NotFoundError, ValidationError } from "../errors/errors.ts";
import type { Message } from "../model/message.ts";
import { usageSchema, validate } from "../model/schemas.ts";
import { messageInputSchema } from "./append-plan.ts";
import { externalizeMedia } from "./media-blobs.ts";
import type { BlobData, CompactionInput } from "./session-store.ts";
import type { StoreContext } from "./store-context.ts";
import { usageDelta, type UsageDelta } from "./usage-totals.ts";

/** A row's place in the view. */
export interface RowPlace {
  readonly seq: number;
  readonly position: number;
  readonly turn: number;
}

/** The compaction a backend writes. */
export interface CompactionPlan {
  /** Seqs of the visible rows to mark summarised (by `summary.seq`). */
  readonly replacedSeqs: readonly number[];
  readonly summary: Message;
  readonly position: number;
  readonly blobs: readonly BlobData[];
  readonly delta: UsageDelta;
  readonly now: string;
}

/** Schema of `CompactionInput` (plus optional summarizer usage). */
export const compactionInputSchema = z.object({
  fromSeq: z.number().int().nonnegative(),
  toSeq: z.number().int().nonnegative(),
  summary: messageInputSchema.extend({ role: z.literal("user", "a summary is stored as a user message") }),
  expectedNextSeq: z.number().int().nonnegative().optional(),
  usage: z.array(z.object({ model: z.string().optional(), usage: usageSchema })).optional(),
});

/** Where the range's ends stand, looked up by the backend (any row, visible or not). */
export interface CompactionEnds {
  readonly from: RowPlace | undefined;
  readonly to: RowPlace | undefined;
}

/**
 * The positions a compaction covers: from the `fromSeq` row's position to the `toSeq` row's position.
 * Throws when a row is missing or the range is reversed.
 */
export function compactionBounds(
  sessionId: string,
  input: Pick<CompactionInput, "fromSeq" | "toSeq">,
  ends: CompactionEnds,
): { from: number; to: number } {
  if (!ends.from)
    throw new NotFoundError("message", `${sessionId}#${input.fromSeq}`, "fromSeq must name a stored message");
  if (!ends.to)
    throw new NotFoundError("message", `${sessionId}#${input.toSeq}`, "toSeq must name a stored message");
  if (ends.from.position > ends.to.position) {
    throw new ValidationError(
      `compaction range is reversed: message ${input.fromSeq} stands after message ${input.toSeq}`,
    );
  }
  return { from: ends.from.position, to: ends.to.position };
}

/**
 * Plans a compaction. `replaced` are the visible rows within the bounds, in view order; `previous` is the
 * visible row just before them (undefined at the start of the view).
 *
 * @example
 * const plan = planCompaction("s1", input, replaced, previous, session.nextSeq, context);
 */
export function planCompaction(
  sessionId: string,
  input: CompactionInput,
  replaced: readonly RowPlace[],
  previous: RowPlace | undefined,
  nextSeq: number,
  context: StoreContext,
): CompactionPlan {
  const first = replaced[0];
  if (first === undefined) {
    throw new ValidationError(
      `compaction of session ${sessionId} from ${input.fromSeq} to ${input.toSeq} covers no visible message; reload and retry`,
    );
  }
  const summaryInput = input.summary;
  const now = context.clock().toISOString();
  const message: Message = {
    ...summaryInput,
    kind: "summary",
    summaryOf: summaryInput.summaryOf ?? {
      fromSeq: input.fromSeq,
      toSeq: input.toSeq,
      messageCount: replaced.length,
    },
    id: summaryInput.id ?? context.ids("sum"),
    sessionId,
    seq: nextSeq,
    turn: previous?.turn ?? 0,
    createdAt: summaryInput.createdAt ?? now,
  };
  const external = externalizeMedia(message, context.inlineMediaLimit);
  return {
    replacedSeqs: replaced.map((row) => row.seq),
    summary: external.message,
    position: first.position,
    blobs: external.blobs,
    delta: usageDelta([external.message], input.usage ?? [], context.prices),
    now,
  };
}

/** Validates a compaction input. */
export function checkCompactionInput(input: CompactionInput): CompactionInput {
  return validate(compactionInputSchema, input, "compaction");
}
