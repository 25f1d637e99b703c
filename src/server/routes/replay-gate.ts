import { HttpError } from "../http/http-error.ts";

/** Replays (inspector timelines, `/replay`) built at once by one server. */
export const MAX_ACTIVE_REPLAYS = 2;
/** Replays that may wait for one of those; more are refused with 429. */
export const MAX_WAITING_REPLAYS = 8;

/**
 * Bounds the replays a server builds at once. A replay of a session at the server's replay limits takes seconds
 * of CPU and holds its views in memory while it is built, so many at once (any tenant, any session) would grow
 * both without bound: at most `maxActive` run, `maxWaiting` more wait their turn in arrival order, and the rest
 * are refused with 429 `rate_limited` and a `Retry-After`.
 *
 * @example
 * const gate = new ReplayGate();
 * const timeline = await gate.run(() => buildTimeline(messages, settings));
 */
export class ReplayGate {
  readonly #maxActive: number;
  readonly #maxWaiting: number;
  readonly #waiting: (() => void)[] = [];
  #active = 0;

  constructor(maxActive = MAX_ACTIVE_REPLAYS, maxWaiting = MAX_WAITING_REPLAYS) {
    this.#maxActive = maxActive;
    this.#maxWaiting = maxWaiting;
  }

  /** Runs `task` once a replay slot is free; throws a 429 `HttpError` when too many already wait. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#active >= this.#maxActive) {
      if (this.#waiting.length >= this.#maxWaiting) {
        throw new HttpError(
          429,
          "rate_limited",
          `the server is building ${this.#active} session replays and ${this.#waiting.length} more wait; ` +
            "retry in a few seconds",
          { "Retry-After": "5" },
        );
      }
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else this.#active++;
    try {
      return await task();
    } finally {
      // The slot passes to the first waiting replay, or is given back.
      const next = this.#waiting.shift();
      if (next) next();
      else this.#active--;
    }
  }
}
