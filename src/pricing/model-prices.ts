import { z } from "zod";
import type { Usage } from "../model/message.ts";
import { validate } from "../model/schemas.ts";

/** Prices of one model in US dollars per million tokens. Cache prices default to the input price. */
export interface ModelPrice {
  readonly input: number;
  readonly output: number;
  readonly cacheRead?: number;
  readonly cacheWrite?: number;
  /** Writes to long-lived cache entries (Anthropic's 1-hour TTL, 2× input); default `cacheWrite`. */
  readonly cacheWriteLong?: number;
}

/** Prices by model name (lower case, without provider prefix). A name also prices its dated versions. */
export type PriceTable = { readonly [model: string]: ModelPrice };

/**
 * List prices (USD per million tokens, standard tier, short context) published by the providers in 2025–2026.
 * They change: pass your own table to `createPriceTable` to override any entry.
 */
export const DEFAULT_PRICES: PriceTable = Object.freeze({
  "claude-opus-4-6": { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25, cacheWriteLong: 10 },
  "claude-opus-4-5": { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25, cacheWriteLong: 10 },
  "claude-opus-4-1": { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75, cacheWriteLong: 30 },
  "claude-opus-4": { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75, cacheWriteLong: 30 },
  "claude-sonnet-4-5": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75, cacheWriteLong: 6 },
  "claude-sonnet-4": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75, cacheWriteLong: 6 },
  "claude-3-7-sonnet": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75, cacheWriteLong: 6 },
  "claude-3-5-sonnet": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75, cacheWriteLong: 6 },
  "claude-haiku-4-5": { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25, cacheWriteLong: 2 },
  "claude-3-5-haiku": { input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1, cacheWriteLong: 1.6 },
  "gpt-5": { input: 1.25, output: 10, cacheRead: 0.125 },
  "gpt-5-mini": { input: 0.25, output: 2, cacheRead: 0.025 },
  "gpt-5-nano": { input: 0.05, output: 0.4, cacheRead: 0.005 },
  "gpt-4.1": { input: 2, output: 8, cacheRead: 0.5 },
  "gpt-4.1-mini": { input: 0.4, output: 1.6, cacheRead: 0.1 },
  "gpt-4.1-nano": { input: 0.1, output: 0.4, cacheRead: 0.025 },
  "gpt-4o": { input: 2.5, output: 10, cacheRead: 1.25 },
  "gpt-4o-mini": { input: 0.15, output: 0.6, cacheRead: 0.075 },
  o3: { input: 2, output: 8, cacheRead: 0.5 },
  "o4-mini": { input: 1.1, output: 4.4, cacheRead: 0.275 },
  "gemini-3-pro": { input: 2, output: 12, cacheRead: 0.2 },
  "gemini-2.5-pro": { input: 1.25, output: 10, cacheRead: 0.31 },
  "gemini-2.5-flash": { input: 0.3, output: 2.5, cacheRead: 0.075 },
  "gemini-2.5-flash-lite": { input: 0.1, output: 0.4, cacheRead: 0.025 },
});

const price = z.number().nonnegative().finite();
const priceTableSchema = z.record(
  z.string().min(1),
  z.object({
    input: price,
    output: price,
    cacheRead: price.optional(),
    cacheWrite: price.optional(),
    cacheWriteLong: price.optional(),
  }),
);

/**
 * The default prices with `overrides` applied (validated; names are matched case-insensitively).
 *
 * @example
 * const prices = createPriceTable({ "my-finetune": { input: 3, output: 12 } });
 */
export function createPriceTable(overrides: PriceTable = {}): PriceTable {
  const checked = validate(priceTableSchema, overrides, "price table");
  const table: Record<string, ModelPrice> = { ...DEFAULT_PRICES };
  for (const [model, entry] of Object.entries(checked)) table[normalizeModelName(model)] = entry;
  return Object.freeze(table);
}

/**
 * Lower case, without a `provider:` / `provider/` / `models/` / Bedrock `us.anthropic.` prefix or a Vertex
 * `@version` suffix.
 */
function normalizeModelName(model: string): string {
  let name = model.trim().toLowerCase();
  name = name.slice(name.lastIndexOf("/") + 1);
  const colon = name.indexOf(":");
  if (colon > 0 && /^[a-z-]+$/.test(name.slice(0, colon))) name = name.slice(colon + 1);
  name = name.replace(/^(?:[a-z]{2}\.)?anthropic\./, "");
  return name.split("@", 1)[0] ?? name;
}

/**
 * The price of a model: an exact entry, else the longest entry the name starts with (so
 * `claude-sonnet-4-5-20250929` is priced as `claude-sonnet-4-5`). Undefined for unknown models.
 *
 * @example
 * findPrice(DEFAULT_PRICES, "anthropic:claude-sonnet-4-5-20250929")?.output; // 15
 */
export function findPrice(table: PriceTable, model: string | undefined): ModelPrice | undefined {
  if (model === undefined) return undefined;
  // Every stored turn prices its model: the answer for a name is remembered per table (a few names at a time),
  // for a frozen table (`DEFAULT_PRICES`, `createPriceTable`'s) only, since another may change under it.
  if (!Object.isFrozen(table)) return lookUpPrice(table, model);
  let found = foundPrices.get(table);
  if (found === undefined) foundPrices.set(table, (found = new Map()));
  if (found.has(model)) return found.get(model);
  const price = lookUpPrice(table, model);
  if (found.size >= MAX_REMEMBERED_PRICES) found.clear();
  found.set(model, price);
  return price;
}

/** Model names whose price `findPrice` remembers per table; beyond it forgets them all. */
const MAX_REMEMBERED_PRICES = 64;
const foundPrices = new WeakMap<PriceTable, Map<string, ModelPrice | undefined>>();

function lookUpPrice(table: PriceTable, model: string): ModelPrice | undefined {
  const name = normalizeModelName(model);
  const exact = table[name];
  if (exact) return exact;
  let best: string | undefined;
  for (const key of Object.keys(table)) {
    const boundary = name.charAt(key.length);
    if (name.startsWith(key) && (boundary === "-" || boundary === ".") && key.length > (best?.length ?? 0))
      best = key;
  }
  return best === undefined ? undefined : table[best];
}

/**
 * The cost in US dollars of one request's usage: uncached input, cache reads and writes (1-hour writes at their
 * own price) and output, each at its price. Zero when the price is unknown.
 *
 * @example
 * usageCost({ input: 1_000_000, output: 0 }, { input: 3, output: 15 }); // 3
 */
export function usageCost(usage: Usage, modelPrice: ModelPrice | undefined): number {
  if (!modelPrice) return 0;
  const cacheRead = usage.cacheRead ?? 0;
  const cacheWrite = usage.cacheWrite ?? 0;
  const longWrite = Math.min(cacheWrite, usage.cacheWriteLong ?? 0);
  const uncached = Math.max(0, usage.input - cacheRead - cacheWrite);
  const writePrice = modelPrice.cacheWrite ?? modelPrice.input;
  const dollars =
    uncached * modelPrice.input +
    cacheRead * (modelPrice.cacheRead ?? modelPrice.input) +
    (cacheWrite - longWrite) * writePrice +
    longWrite * (modelPrice.cacheWriteLong ?? writePrice) +
    usage.output * modelPrice.output;
  return dollars / 1_000_000;
}
