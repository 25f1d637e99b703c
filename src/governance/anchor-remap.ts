import type { Message } from "../model/message.ts";

/** How far from where it is expected a message is looked for before the whole list is indexed. */
const NEAR = 16;

/**
 * Cache anchors (ends of prefixes, as indices in `from`) as indices in `to`, a list made from `from` by dropping
 * or inserting messages (orphan repair, leaving out system messages): each anchor stays on its message, or on the
 * nearest message before it that `to` still holds; an anchor with none is left out. A message is looked for near
 * where it should be first, so a request pays for indexing `to` only when the lists differ by many messages.
 *
 * @example
 * remapAnchors([2], view, view.filter((message) => message.role !== "system")); // [1] when view[0] is a system message
 */
export function remapAnchors(
  anchors: readonly number[],
  from: readonly Message[],
  to: readonly Message[],
): number[] {
  if (anchors.length === 0) return [];
  if (from === to) return [...anchors];
  let positions: Map<Message, number> | undefined;
  const shift = to.length - from.length;
  const find = (message: Message, index: number): number | undefined => {
    for (const expected of [index, index + shift])
      for (let distance = 0; distance <= NEAR; distance++) {
        if (to[expected - distance] === message) return expected - distance;
        if (to[expected + distance] === message) return expected + distance;
      }
    positions ??= new Map(to.map((candidate, position) => [candidate, position]));
    return positions.get(message);
  };
  const remapped: number[] = [];
  for (const anchor of anchors) {
    for (let index = Math.min(anchor, from.length - 1); index >= 0; index--) {
      const position = find(from[index]!, index);
      if (position === undefined) continue;
      if (!remapped.includes(position)) remapped.push(position);
      break;
    }
  }
  return remapped.sort((a, b) => a - b);
}
