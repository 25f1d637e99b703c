/**
 * The inspector's cache of session timelines: replays of a stored session, kept while the session is unchanged.
 */

/** How many sessions' timelines are kept between requests (a timeline is rebuilt when its session changed). */
export const CACHED_TIMELINES = 8;

interface CachedTimeline<Value> {
  readonly version: string;
  readonly timeline: Promise<Value>;
  /** Characters of the session's stored text once built (what its views hold in memory grows with it). */
  characters: number;
}

/**
 * A small LRU of timeline replays keyed by tenant and session, each valid while its session is unchanged (its
 * `version`). It keeps at most `CACHED_TIMELINES` and, beyond the newest, no more sessions than `characters` of
 * stored text in all: a timeline holds every request's view, about ten bytes per character of its session.
 *
 * @example
 * const cache = new TimelineCache<Timeline>(16_000_000);
 * const timeline = await cache.get(key, version, async () => ({ timeline: await build(), characters }));
 */
export class TimelineCache<Value> {
  readonly #entries = new Map<string, CachedTimeline<Value>>();
  readonly #characters: number;

  constructor(characters: number) {
    this.#characters = characters;
  }

  /** The timeline of `key` at `version`: the cached one, or `build`'s (which then replaces it). */
  get(
    key: string,
    version: string,
    build: () => Promise<{ timeline: Value; characters: number }>,
  ): Promise<Value> {
    const cached = this.#entries.get(key);
    this.#entries.delete(key);
    const entry: CachedTimeline<Value> =
      cached?.version === version
        ? cached
        : {
            version,
            characters: 0,
            timeline: build().then(({ timeline, characters }) => {
              entry.characters = characters;
              this.#evict();
              return timeline;
            }),
          };
    this.#entries.set(key, entry);
    entry.timeline.catch(() => this.#entries.get(key) === entry && this.#entries.delete(key));
    this.#evict();
    return entry.timeline;
  }

  /** Drops the least recently used timelines while over the count or the size (the newest one always stays). */
  #evict(): void {
    let characters = 0;
    for (const entry of this.#entries.values()) characters += entry.characters;
    while (
      this.#entries.size > CACHED_TIMELINES ||
      (this.#entries.size > 1 && characters > this.#characters)
    ) {
      const [oldest, entry] = this.#entries.entries().next().value!;
      characters -= entry.characters;
      this.#entries.delete(oldest);
    }
  }
}
