import type { AppendPlan } from "./append-plan.ts";
import type { SessionInit, SessionRecord } from "./session-store.ts";
import { addUsage, EMPTY_USAGE_TOTALS, type UsageDelta } from "./usage-totals.ts";

/**
 * The record of a session created by its first turn (before the turn's counters are added).
 *
 * @example
 * const record = withTurn(newSessionRecord("s1", { owner: "ada" }, plan), plan);
 */
export function newSessionRecord(id: string, init: SessionInit | undefined, plan: AppendPlan): SessionRecord {
  return {
    id,
    ...(init?.owner !== undefined && { owner: init.owner }),
    ...(init?.agent !== undefined && { agent: init.agent }),
    ...(plan.title !== undefined && { title: plan.title }),
    createdAt: plan.now,
    updatedAt: plan.now,
    messageCount: 0,
    turnCount: 0,
    nextSeq: 0,
    usage: EMPTY_USAGE_TOTALS,
    cost: 0,
    metadata: init?.metadata ?? {},
    executorSessionIds: {},
  };
}

/**
 * `record` after an append: counters, usage and cost added, `updatedAt` moved on.
 *
 * @example
 * const updated = withTurn(record, plan);
 */
export function withTurn(record: SessionRecord, plan: AppendPlan): SessionRecord {
  return {
    ...withDelta(record, plan.delta, plan.now),
    messageCount: record.messageCount + plan.rows.length,
    turnCount: plan.turnCount,
    nextSeq: plan.nextSeq,
  };
}

/**
 * `record` with usage and cost added and `updatedAt` set to `now`.
 *
 * @example
 * withDelta(record, { usage, cost }, now);
 */
export function withDelta(record: SessionRecord, delta: UsageDelta, now: string): SessionRecord {
  return {
    ...record,
    usage: addUsage(record.usage, delta.usage),
    cost: record.cost + delta.cost,
    updatedAt: now,
  };
}
