/** Keys are bucketed by their first characters; shorter keys are searched one by one. */
const PREFIX_LENGTH = 4;
/** Below this many keys, one `includes` per key is cheaper than a scan. */
const SCAN_THRESHOLD = 16;

/**
 * The keys that occur in `text` at or after `from`. With many keys it scans the text once, looking each
 * position's first characters up in a map of key prefixes: O(text + matches) instead of O(keys × text).
 *
 * @example
 * findSubstrings("read(src/a.ts) and src/b.ts", 0, ["src/a.ts", "src/c.ts"]) // Set { "src/a.ts" }
 */
export function findSubstrings(text: string, from: number, keys: Iterable<string>): Set<string> {
  const found = new Set<string>();
  const list = [...keys];
  if (list.length < SCAN_THRESHOLD) {
    for (const key of list) if (text.includes(key, from)) found.add(key);
    return found;
  }
  const buckets = new Map<string, string[]>();
  for (const key of list) {
    if (key.length < PREFIX_LENGTH) {
      if (text.includes(key, from)) found.add(key);
      continue;
    }
    const prefix = key.slice(0, PREFIX_LENGTH);
    const bucket = buckets.get(prefix);
    if (bucket) bucket.push(key);
    else buckets.set(prefix, [key]);
  }
  for (let position = from; position <= text.length - PREFIX_LENGTH; position++) {
    const bucket = buckets.get(text.slice(position, position + PREFIX_LENGTH));
    if (bucket === undefined) continue;
    for (const key of bucket) if (!found.has(key) && text.startsWith(key, position)) found.add(key);
  }
  return found;
}
