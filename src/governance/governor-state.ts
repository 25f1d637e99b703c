import { z } from "zod";
import type { Message } from "../model/message.ts";
import { messageSchema, validate } from "../model/schemas.ts";
import type { CachedPrefix } from "./cached-prefix.ts";
import type { LoopCall } from "./loop-detector.ts";
import type { CompactionGuard } from "./processor.ts";

/** One message of a persisted governed view: a history message by id, or the message governance put in its place. */
export type GovernorViewEntry = { readonly id: string } | { readonly message: Message };

/**
 * Everything a governor carries from one request to the next, as a plain value: what `Governor.snapshot()`
 * returns and `Governor.restore()` takes back, so a session resumed after a restart governs exactly as if the
 * process had never stopped — the same view, the same pending checkpoints, the same cache arithmetic — and the
 * provider's cached prefix stays valid. What can be derived (the view's tokens, its turns) is not stored.
 */
export interface GovernorState {
  readonly version: 1;
  readonly view: readonly GovernorViewEntry[];
  /** History messages the view covers, and the id of the last one (new messages are appended after it). */
  readonly covered: number;
  readonly lastCoveredId?: string;
  readonly requests: number;
  readonly emergencyStage: number;
  /** Tool output and long arguments piled up since the last checkpoint, and where the next optional check is. */
  readonly piled: {
    readonly toolTokens: number;
    readonly inputTokens: number;
    readonly nextCheckAt: number;
    readonly nextSettledCheckAt: number;
  };
  /** The provider-usage anchor (local and reported totals of the anchored request). */
  readonly usage?: { readonly estimated: number; readonly reported: number };
  readonly guard: CompactionGuard;
  readonly recentCalls: readonly LoopCall[];
  readonly cached?: CachedPrefix;
  readonly anchor?: number;
}

const count = z.number().int().nonnegative();

const stateSchema = z.object({
  version: z.literal(1),
  view: z.array(z.union([z.object({ id: z.string().min(1) }), z.object({ message: messageSchema })])),
  covered: count,
  lastCoveredId: z.string().optional(),
  requests: count,
  emergencyStage: count,
  piled: z.object({
    toolTokens: count,
    inputTokens: count,
    nextCheckAt: z.number(),
    nextSettledCheckAt: z.number(),
  }),
  usage: z.object({ estimated: z.number().positive(), reported: z.number().positive() }).optional(),
  guard: z.object({
    failedSegments: z.record(z.string(), z.number()).optional(),
    settledPausedBelow: z.number().optional(),
    summarySizeRatio: z.number().positive().optional(),
  }),
  recentCalls: z.array(z.object({ signature: z.string(), label: z.string() })),
  cached: z.object({ at: z.number(), ends: z.array(z.number().int()) }).optional(),
  anchor: z.number().int().optional(),
});

/**
 * Checks a persisted governor state (it comes back from a store, possibly written by another version).
 * Throws `ValidationError` naming what is wrong.
 *
 * @example
 * governor.restore(parseGovernorState(await store.loadGovernorState(id)), history);
 */
export function parseGovernorState(value: unknown): GovernorState {
  validate(stateSchema, value, "governor state");
  // The value as written, not zod's copy: a parsed copy orders each message's keys by the schema, and a restored
  // view must serialise byte for byte as the one that was saved.
  return value as GovernorState;
}
