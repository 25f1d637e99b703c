/** Prefix of the call ids `fromGemini` makes up for function calls that have none. */
export const GENERATED_CALL_ID_PREFIX = "gemini-call-";

/**
 * A stable id for a Gemini function call without one, from its position: the same payload always gets the same
 * ids, and appending to the payload does not change earlier ones. `toGemini` leaves these ids out again.
 *
 * @example
 * generatedCallId(4, 1); // "gemini-call-4-1"
 */
export function generatedCallId(contentIndex: number, partIndex: number): string {
  return `${GENERATED_CALL_ID_PREFIX}${contentIndex}-${partIndex}`;
}

/** True for ids made by `generatedCallId`. */
export function isGeneratedCallId(id: string): boolean {
  return /^gemini-call-\d+-\d+$/.test(id);
}
