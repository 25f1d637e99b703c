import { isDeepStrictEqual } from "node:util";

/**
 * Where the ends of message prefixes fall in a converted request, for breakpoints on the governor's cache anchors
 * (`GovernedRequest.cacheAnchors`). `convert` turns messages into the provider's message list (it may merge
 * neighbours); for each index the prefix `messages[0..index]` is converted too: the anchor sits on the prefix's
 * last converted message after `parts` of its parts. An index whose converted prefix is not a prefix of the whole
 * request (the converter moved parts across it) gets no anchor.
 *
 * @example
 * anchorPositions(messages, [4], (list) => toAnthropic(list).messages, blocksOf); // [{ message: 3, parts: 2 }]
 */
export function anchorPositions<Source, Converted>(
  messages: readonly Source[],
  indices: readonly number[],
  convert: (messages: readonly Source[]) => readonly Converted[],
  partsOf: (message: Converted) => readonly unknown[],
  whole: readonly Converted[] = convert(messages),
): { readonly message: number; readonly parts: number }[] {
  const positions: { message: number; parts: number }[] = [];
  for (const index of indices) {
    if (!Number.isInteger(index) || index < 0 || index >= messages.length) continue;
    const prefix = convert(messages.slice(0, index + 1));
    const at = prefix.length - 1;
    const last = prefix[at];
    const full = whole[at];
    if (last === undefined || full === undefined) continue;
    const parts = partsOf(last);
    if (!isDeepStrictEqual(partsOf(full).slice(0, parts.length), parts)) continue;
    positions.push({ message: at, parts: parts.length });
  }
  return positions;
}
