import { z } from "zod";
import { randomIds, systemClock, type Clock, type IdGenerator } from "../model/ids.ts";
import { validate } from "../model/schemas.ts";
import { DEFAULT_INLINE_MEDIA_LIMIT } from "./media-blobs.ts";
import { DEFAULT_PRICES, type PriceTable } from "../pricing/model-prices.ts";
import type { SessionStoreOptions } from "./session-store.ts";

/** Store options with their defaults applied; shared by every backend. */
export interface StoreContext {
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly prices: PriceTable;
  readonly inlineMediaLimit: number;
}

const optionsSchema = z.object({
  inlineMediaLimit: z.number().int().nonnegative().optional(),
});

/**
 * Applies the defaults of `SessionStoreOptions`.
 *
 * @example
 * const context = storeContext({ clock: () => new Date(0) });
 */
export function storeContext(options: SessionStoreOptions = {}): StoreContext {
  validate(optionsSchema, { inlineMediaLimit: options.inlineMediaLimit }, "store options");
  return {
    clock: options.clock ?? systemClock,
    ids: options.ids ?? randomIds,
    prices: options.prices ?? DEFAULT_PRICES,
    inlineMediaLimit: options.inlineMediaLimit ?? DEFAULT_INLINE_MEDIA_LIMIT,
  };
}

/**
 * The cut-off time for `cleanup(days)`: sessions updated before it are deleted. Undefined for 0 (keep all).
 *
 * @example
 * retentionCutoff(30, new Date("2025-03-31T00:00:00Z")); // "2025-03-01T00:00:00.000Z"
 */
export function retentionCutoff(days: number, now: Date): string | undefined {
  validate(z.number().nonnegative().finite(), days, "retention days");
  if (days === 0) return undefined;
  return new Date(now.getTime() - days * 86_400_000).toISOString();
}
