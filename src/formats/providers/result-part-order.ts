import type { Message } from "../../model/message.ts";

/**
 * Metadata key under which a tool message keeps where its result's attachments sat among the result's parts
 * (their 0-based places in the list of text and media parts), for a result whose parts were not all text first
 * and media after: ctxkit holds the text and the attachments apart, so this is the only trace of the order.
 */
export const ATTACHMENT_PLACES_KEY = "toolResult.attachmentPlaces";

/**
 * The metadata recording the order of a tool result's parts, from whether each part (in order) is media: the
 * places of the media parts, or `undefined` when no text part follows a media part (the order every exporter
 * uses without a record).
 *
 * @example
 * attachmentPlaces([true, false]); // { "toolResult.attachmentPlaces": [0] } (an image before the text)
 * attachmentPlaces([false, true]); // undefined
 */
export function attachmentPlaces(
  isMedia: readonly boolean[],
): { [ATTACHMENT_PLACES_KEY]: number[] } | undefined {
  const places = isMedia.flatMap((media, at) => (media ? [at] : []));
  const first = places[0];
  if (first === undefined || isMedia.slice(first).every(Boolean)) return undefined;
  return { [ATTACHMENT_PLACES_KEY]: places };
}

function recordedPlaces(message: Message, media: number, total: number): number[] | undefined {
  const places = message.metadata?.[ATTACHMENT_PLACES_KEY];
  if (!Array.isArray(places) || places.length !== media) return undefined;
  let previous = -1;
  for (const place of places) {
    if (typeof place !== "number" || !Number.isInteger(place) || place <= previous || place >= total)
      return undefined;
    previous = place;
  }
  return places as number[];
}

/**
 * A tool result's parts in the order `message` recorded (see `attachmentPlaces`): `media` at the recorded places,
 * `texts` in order in the others. Without a record that fits (one place per media part, inside the list), the
 * texts come first.
 *
 * @example
 * orderResultParts([textPart], [imagePart], message); // [imagePart, textPart] when the image came first
 */
export function orderResultParts<Part>(
  texts: readonly Part[],
  media: readonly Part[],
  message: Message,
): Part[] {
  const total = texts.length + media.length;
  const places = recordedPlaces(message, media.length, total);
  if (places === undefined) return [...texts, ...media];
  const parts: Part[] = [];
  let text = 0;
  let medium = 0;
  for (let at = 0; at < total; at++) parts.push(places[medium] === at ? media[medium++]! : texts[text++]!);
  return parts;
}
