/**
 * A text, whole or already split into its lines. Files too large for one JavaScript string (about 512 MB)
 * are read line by line, so the JSONL readers take either.
 */
export type TextOrLines = string | readonly string[];

/**
 * The lines of a text, without their `\n`, in order (line n is the n-th value); a text ending with `\n` has
 * no empty last line. Slices the text instead of splitting it, so no second copy of it is made.
 *
 * @example
 * [...textLines('{"a":1}\n{"a":2}\n')]; // ['{"a":1}', '{"a":2}']
 */
export function* textLines(input: TextOrLines): Generator<string> {
  if (typeof input !== "string") {
    yield* input;
    return;
  }
  let start = 0;
  while (start < input.length) {
    const newline = input.indexOf("\n", start);
    const end = newline === -1 ? input.length : newline;
    yield input.slice(start, end);
    start = end + 1;
  }
}
