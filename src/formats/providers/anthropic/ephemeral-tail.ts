import type { Message } from "../../../model/message.ts";

/**
 * How many messages at the end of a request exist in that request only: notices governance appends for one
 * request (the budget-exit notice, `metadata.notice`) and never stores. The next request does not start with
 * them, so a cache breakpoint goes before them, on the newest stable message.
 *
 * @example
 * ephemeralTail(request.messages); // 1 when the request ends with the budget-exit notice
 */
export function ephemeralTail(messages: readonly Message[]): number {
  let count = 0;
  while (count < messages.length && messages[messages.length - 1 - count]!.metadata?.["notice"] !== undefined)
    count++;
  return count;
}
