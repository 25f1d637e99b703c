import { randomUUID } from "node:crypto";

/** Creates unique ids. Swap in a deterministic one in tests (see `ctxkit/test`). */
export type IdGenerator = (prefix: string) => string;

/** Returns the current time. Swap in a fixed clock in tests. */
export type Clock = () => Date;

/** Random, collision-free ids such as `msg_3f2a…`. */
export const randomIds: IdGenerator = (prefix) => `${prefix}_${randomUUID().replaceAll("-", "")}`;

/** The wall clock. */
export const systemClock: Clock = () => new Date();

/** Ids `prefix_1`, `prefix_2`, … for reproducible tests and demos. */
export function sequentialIds(start = 1): IdGenerator {
  let next = start;
  return (prefix) => `${prefix}_${next++}`;
}
