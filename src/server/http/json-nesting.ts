/**
 * The deepest nesting in a JSON text, found without parsing it (one pass, no recursion): the nesting of its
 * arrays and objects, and within each string value the nesting of the brackets it holds — a string can carry JSON
 * of its own (tool call arguments, tool results) that the server parses or walks later. Unbalanced closing
 * brackets in a string count for nothing.
 *
 * @example
 * deepestNesting('{"a":[1,"[[2]]"]}'); // 2 (the string's [[ ]] counts 2, the structure 2)
 */
export function deepestNesting(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  let stringDepth = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c)
        index++; // a backslash escapes the next character
      else if (code === 0x22) inString = false;
      else if (code === 0x5b || code === 0x7b) {
        if (++stringDepth > deepest) deepest = stringDepth;
      } else if ((code === 0x5d || code === 0x7d) && stringDepth > 0) stringDepth--;
    } else if (code === 0x22) {
      inString = true;
      stringDepth = 0;
    } else if (code === 0x5b || code === 0x7b) {
      if (++depth > deepest) deepest = depth;
    } else if (code === 0x5d || code === 0x7d) depth--;
  }
  return deepest;
}
