/**
 * The characters of every string in `value` (object keys left out): the size of what a request carries as the
 * fake counter measures it, without the quotes and escapes its JSON adds (a file's `"` and newlines count twice
 * in `JSON.stringify`).
 *
 * @example
 * textChars({ role: "user", content: [{ type: "text", text: "hi" }] }); // 10 ("user" + "text" + "hi")
 */
export function textChars(value: unknown): number {
  if (typeof value === "string") return value.length;
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + textChars(item), 0);
  if (value !== null && typeof value === "object")
    return Object.values(value).reduce((sum: number, item) => sum + textChars(item), 0);
  return 0;
}
