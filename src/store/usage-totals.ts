import type { Message, Usage } from "../model/message.ts";
import { findPrice, usageCost, type PriceTable } from "../pricing/model-prices.ts";
import type { ModelUsage, UsageTotals } from "./session-store.ts";

/** Totals of a session with no usage yet. */
export const EMPTY_USAGE_TOTALS: UsageTotals = Object.freeze({
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  reasoning: 0,
});

/**
 * `totals` plus one request's usage (a new object).
 *
 * @example
 * addUsage(EMPTY_USAGE_TOTALS, { input: 10, output: 2 }).input; // 10
 */
export function addUsage(totals: UsageTotals, usage: Usage): UsageTotals {
  return {
    input: totals.input + usage.input,
    output: totals.output + usage.output,
    cacheRead: totals.cacheRead + (usage.cacheRead ?? 0),
    cacheWrite: totals.cacheWrite + (usage.cacheWrite ?? 0),
    reasoning: totals.reasoning + (usage.reasoning ?? 0),
  };
}

/** Usage and cost added by some messages and extra usage. */
export interface UsageDelta {
  readonly usage: UsageTotals;
  readonly cost: number;
}

/**
 * Sums the provider-reported usage of `messages` (and of `extra`, usage not attached to a message) and prices
 * each request with its model's price.
 *
 * @example
 * usageDelta(turnMessages, [], DEFAULT_PRICES).cost;
 */
export function usageDelta(
  messages: readonly Pick<Message, "usage" | "model">[],
  extra: readonly ModelUsage[],
  prices: PriceTable,
): UsageDelta {
  let usage = EMPTY_USAGE_TOTALS;
  let cost = 0;
  const requests: ModelUsage[] = [];
  for (const message of messages) {
    if (message.usage)
      requests.push({ usage: message.usage, ...(message.model && { model: message.model }) });
  }
  for (const request of [...requests, ...extra]) {
    usage = addUsage(usage, request.usage);
    cost += usageCost(request.usage, findPrice(prices, request.model));
  }
  return { usage, cost };
}
