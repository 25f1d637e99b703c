import { createEstimatingCounter } from "../../../tokens/estimating-counter.ts";

const claudeEstimate = createEstimatingCounter({ family: "claude" });

/** The default token count of the minimum-length check: ctxkit's Claude estimator. */
export const estimateClaudeTokens = (text: string): number => claudeEstimate.countText(text);

/**
 * A prompt part as text to count: JSON, with binary data and long inline `data` strings (base64 media) left
 * out, since what they cost is not their length in characters, and AI SDK `providerOptions` (settings for the
 * provider, not prompt text: a part's options do not move the cache minimum).
 *
 * @example
 * countableText([{ type: "text", text: "hi" }]); // '[{"type":"text","text":"hi"}]'
 */
export function countableText(value: unknown): string {
  if (typeof value === "string") return value;
  return (
    JSON.stringify(value, (key, item: unknown) => {
      if (key === "providerOptions") return undefined;
      if (item instanceof Uint8Array || item instanceof ArrayBuffer) return "[binary]";
      if (key === "data" && typeof item === "string" && item.length > 256) return "[data]";
      return item;
    }) ?? ""
  );
}

/**
 * Tokens through the `index`-th part of a prompt (parts in request order, `sizeOf(k)` the tokens of part k),
 * counted only as far as needed: once the prefix reaches `enough`, later parts are not counted and the value
 * returned for them is the (already sufficient) prefix reached so far.
 *
 * @example
 * const through = prefixTokens((k) => sizes[k]!, 1_024);
 * through(3) >= 1_024; // whether parts 0–3 reach the minimum
 */
export function prefixTokens(sizeOf: (index: number) => number, enough: number): (index: number) => number {
  const prefix: number[] = [];
  return (index) => {
    while (prefix.length <= index) {
      const reached = prefix.at(-1) ?? 0;
      if (reached >= enough) return reached;
      prefix.push(reached + sizeOf(prefix.length));
    }
    return prefix[index]!;
  };
}
