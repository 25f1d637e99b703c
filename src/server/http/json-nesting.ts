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

/** A UTF-16 surrogate without its pair (code units, no `u` flag). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * True when every string of a parsed JSON value (keys included) is well-formed Unicode: JSON's `\ud800` escapes
 * can write a lone surrogate, which no UTF-8 store or upstream can hold as sent (it would be stored as U+FFFD).
 * An explicit stack: the value may nest as deep as the parser allowed.
 *
 * @example
 * hasOnlyWellFormedText(JSON.parse('{"a":"\\ud800"}')); // false
 */
export function hasOnlyWellFormedText(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const current = pending.pop();
    if (typeof current === "string") {
      if (LONE_SURROGATE.test(current)) return false;
    } else if (Array.isArray(current)) {
      for (const item of current) pending.push(item);
    } else if (typeof current === "object" && current !== null) {
      for (const [key, item] of Object.entries(current)) {
        if (LONE_SURROGATE.test(key)) return false;
        pending.push(item);
      }
    }
  }
  return true;
}
