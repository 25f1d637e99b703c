import type { Message } from "../model/message.ts";

/**
 * Cache anchors (ends of prefixes, as indices in `from`) as indices in `to`, a list made from `from` by dropping
 * or inserting messages (orphan repair, leaving out system messages): each anchor stays on its message, or on the
 * nearest message before it that `to` still holds; an anchor with none is left out. Linear in the two lists.
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
  const positions = new Map<Message, number>();
  to.forEach((message, index) => positions.set(message, index));
  const remapped: number[] = [];
  for (const anchor of anchors) {
    for (let index = Math.min(anchor, from.length - 1); index >= 0; index--) {
      const position = positions.get(from[index]!);
      if (position === undefined) continue;
      if (!remapped.includes(position)) remapped.push(position);
      break;
    }
  }
  return remapped.sort((a, b) => a - b);
}
