import { z } from "zod";
import type { Message } from "../model/message.ts";
import { messageSchema, validate } from "../model/schemas.ts";
import type { CachedPrefix } from "./cached-prefix.ts";
import type { LoopCall } from "./loop-detector.ts";
import { REUSE_AGE_LIMITS } from "./reuse-rates.ts";
import type { SessionReuseCounts } from "./session-reuse.ts";
import { CONTEXT_KINDS } from "../metrics/context-kind.ts";
import type { CompactionGuard } from "./processor.ts";

/** One message of a persisted governed view: a history message by id, or the message governance put in its place. */
export type GovernorViewEntry = { readonly id: string } | { readonly message: Message };

/**
 * Everything a governor changes from one request to the next, as one plain object it reads and writes in place
 * (nothing else in a governor changes but caches: each message's token count, and which view messages are history
 * messages as they came). JSON-serialisable; `persistedGovernorState` is what a store keeps of it.
 */
export interface GovernorLiveState {
  /**
   * The governed view as of the last request (without notices or orphan repair); it grows in place at its end
   * between checkpoints. Its figures (tokens, turns) are derived from it (`ViewFigureCache`), not kept here.
   */
  view: Message[];
  /** History messages the view covers, and the id of the last one (new messages are appended after it). */
  covered: number;
  lastCoveredId: string | undefined;
  /** Requests prepared so far. */
  requests: number;
  /** Provider overflow errors in a row (`recover`). */
  emergencyStage: number;
  /**
   * Tool output and long arguments piled up since the last checkpoint and where the next optional checks are;
   * `since`: the request count at that checkpoint (how long what a checkpoint would remove has been kept);
   * `skippedChecks`: optional checks in a row that took none (absent: none; each doubles the wait for the next);
   * `dueAt`: the request before which no optional check comes (a checkpoint that paid but was not yet worth its
   * rewrite).
   */
  piled: {
    toolTokens: number;
    inputTokens: number;
    nextCheckAt: number;
    nextSettledCheckAt: number;
    since: number;
    skippedChecks?: number;
    dueAt?: number;
  };
  /** The provider-usage anchor (local and reported totals of the anchored request), once a usage was observed. */
  usage: { readonly estimated: number; readonly reported: number } | undefined;
  /** The inflation guard's memory (processors update it). */
  guard: CompactionGuard;
  /** The loop detector's recent tool calls. */
  recentCalls: LoopCall[];
  /** What the provider's cache holds after the previous request, for pricing a rewrite. */
  cached: CachedPrefix | undefined;
  /** The cache anchor of the previous request (an index into the view). */
  anchor: number | undefined;
}

/** A governor's state before its first request. */
export function initialGovernorLiveState(): GovernorLiveState {
  return {
    view: [],
    covered: 0,
    lastCoveredId: undefined,
    requests: 0,
    emergencyStage: 0,
    piled: { toolTokens: 0, inputTokens: 0, nextCheckAt: 0, nextSettledCheckAt: 0, since: 0 },
    usage: undefined,
    guard: {},
    recentCalls: [],
    cached: undefined,
    anchor: undefined,
  };
}

/**
 * The live `piled` of a stored one. A state stored before the skipped optional checks were counted has a pending
 * postponement (a next check set since the last checkpoint) when at least one check was skipped: it counts as one,
 * the fewest it can be (the earlier governor postponed by the base step only).
 */
export function restoredPiled(piled: GovernorState["piled"]): GovernorLiveState["piled"] {
  const live = { ...piled, since: piled.since ?? 0 };
  if (piled.skippedChecks !== undefined) return live;
  const pending = piled.nextCheckAt > 0 || piled.nextSettledCheckAt > 0;
  return pending ? { ...live, skippedChecks: 1 } : live;
}

/** A copy of the guard (structuredClone costs more than the whole rest of a snapshot for this small object). */
export function copyGuard(guard: CompactionGuard): CompactionGuard {
  const { failedSegments, ...numbers } = guard;
  return failedSegments === undefined ? numbers : { ...numbers, failedSegments: { ...failedSegments } };
}

/**
 * What a store keeps of a live state (see `GovernorState`): history messages of the view by id (`isHistory`
 * says which), everything derivable left out.
 */
export function persistedGovernorState(
  live: GovernorLiveState,
  isHistory: (message: Message) => boolean,
): GovernorState {
  return {
    version: 1,
    view: live.view.map((message) => (isHistory(message) ? { id: message.id } : { message })),
    covered: live.covered,
    ...(live.lastCoveredId !== undefined && { lastCoveredId: live.lastCoveredId }),
    requests: live.requests,
    emergencyStage: live.emergencyStage,
    piled: { ...live.piled },
    ...(live.usage !== undefined && { usage: { ...live.usage } }),
    guard: copyGuard(live.guard),
    recentCalls: live.recentCalls.map((call) => ({ ...call })),
    ...(live.cached !== undefined && { cached: live.cached }),
    ...(live.anchor !== undefined && { anchor: live.anchor }),
  };
}

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
  /**
   * As the live state's `piled`. In states stored before they were kept, `since` is absent (restored as the
   * session's start), `skippedChecks` too (see `restoredPiled`); `dueAt` is absent when no check waits.
   */
  readonly piled: {
    readonly toolTokens: number;
    readonly inputTokens: number;
    readonly nextCheckAt: number;
    readonly nextSettledCheckAt: number;
    readonly since?: number;
    readonly skippedChecks?: number;
    readonly dueAt?: number;
  };
  /** The provider-usage anchor (local and reported totals of the anchored request). */
  readonly usage?: { readonly estimated: number; readonly reported: number };
  readonly guard: CompactionGuard;
  readonly recentCalls: readonly LoopCall[];
  readonly cached?: CachedPrefix;
  readonly anchor?: number;
  /** What the session's agent used again so far (absent in states stored before it was kept: counted again). */
  readonly reuse?: SessionReuseCounts;
}

const count = z.number().int().nonnegative();
const reuseRow = z.array(z.number().nonnegative()).length(REUSE_AGE_LIMITS.length);
const kinds = <T extends z.ZodType>(value: T) =>
  z.object({ read: value, search: value, edit: value, shell: value, other: value, written: value });
const reuseSchema = z.object({
  replies: count,
  alive: kinds(reuseRow),
  used: kinds(reuseRow),
  births: z.array(z.tuple([count, kinds(count.optional()).partial()])).optional(),
  recent: z.array(z.tuple([z.string(), count, z.enum(CONTEXT_KINDS).nullable()])).optional(),
});

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
    since: count.optional(),
    skippedChecks: count.optional(),
    dueAt: count.optional(),
  }),
  usage: z.object({ estimated: z.number().positive(), reported: z.number().positive() }).optional(),
  guard: z.object({
    failedSegments: z.record(z.string(), z.number()).optional(),
    settledPausedBelow: z.number().optional(),
    summarySizeRatio: z.number().positive().optional(),
  }),
  recentCalls: z.array(
    z.object({
      signature: z.string(),
      label: z.string(),
      callId: z.string().optional(),
      result: z.string().optional(),
    }),
  ),
  cached: z.object({ at: z.number(), ends: z.array(z.number().int()) }).optional(),
  anchor: z.number().int().optional(),
  // Checked on its own (reuseSchema): counts of another shape are counted again, the rest of the state stays.
  reuse: z.unknown().optional(),
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
  const state = value as GovernorState;
  if (state.reuse === undefined || reuseSchema.safeParse(state.reuse).success) return state;
  const { reuse: _unreadable, ...rest } = state;
  return rest;
}

/**
 * Whether restoring `state` on `history` needs the stored messages summaries replaced (`Governor.restore`'s
 * `originals`): the state's reuse count still follows messages the history no longer holds.
 *
 * @example
 * const originals = governorStateNeedsOriginals(state, history) ? await store.loadMessages(id, { strategy: "all" }) : [];
 */
export function governorStateNeedsOriginals(state: GovernorState, history: readonly Message[]): boolean {
  const recent = state.reuse?.recent;
  if (recent === undefined || recent.length === 0) return false;
  const ids = new Set(history.map((message) => message.id));
  return recent.some(([id]) => !ids.has(id));
}
