import { SubstringSet } from "./substring-set.ts";

/** Below this many keys, one `includes` per key is cheaper than a scan. */
const SCAN_THRESHOLD = 16;

/**
 * The keys that occur in `text` at or after `from`. With many keys it scans the text once against a
 * `SubstringSet` of them: O(text + matches) instead of O(keys × text).
 *
 * @example
 * findSubstrings("read(src/a.ts) and src/b.ts", 0, ["src/a.ts", "src/c.ts"]) // Set { "src/a.ts" }
 */
export function findSubstrings(text: string, from: number, keys: Iterable<string>): Set<string> {
  const list = [...keys];
  if (list.length < SCAN_THRESHOLD) return new Set(list.filter((key) => text.includes(key, from)));
  const found = new Set<string>();
  new SubstringSet(list).scan(text, from, (key) => found.add(key));
  return found;
}
