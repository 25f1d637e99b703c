/** Keys are stored as a trie of chunks of this many characters. */
const CHUNK = 4;

interface Node {
  readonly children: Map<string, Node>;
  /** The keys that end below this node: their last (shorter than a chunk, possibly empty) part → the key. */
  readonly ends: Map<string, string>;
}

function node(): Node {
  return { children: new Map(), ends: new Map() };
}

/**
 * A set of keys that can be searched for in a text: `scan` reports every key occurring at each position. Keys
 * live in a trie of 4-character chunks, so a position costs a few map look-ups along the longest key it could
 * start, however many keys there are and however many share a prefix (`src/…`). Keys are added and deleted one
 * by one, so a caller can keep one set up to date instead of rebuilding it.
 *
 * @example
 * const keys = new SubstringSet(["src/a.ts", "read(src/b.ts)"]);
 * keys.scan("see src/a.ts", 0, (key) => found.add(key)); // "src/a.ts"
 */
export class SubstringSet {
  readonly #root = node();
  #size = 0;

  constructor(keys: Iterable<string> = []) {
    for (const key of keys) this.add(key);
  }

  get size(): number {
    return this.#size;
  }

  add(key: string): void {
    let at = this.#root;
    let offset = 0;
    for (; offset + CHUNK <= key.length; offset += CHUNK) {
      const chunk = key.slice(offset, offset + CHUNK);
      let next = at.children.get(chunk);
      if (next === undefined) {
        next = node();
        at.children.set(chunk, next);
      }
      at = next;
    }
    const tail = key.slice(offset);
    if (at.ends.has(tail)) return;
    at.ends.set(tail, key);
    this.#size++;
  }

  /** Removes `key` (the trie's nodes stay: a key that left tends to come back). */
  delete(key: string): void {
    let at: Node | undefined = this.#root;
    let offset = 0;
    for (; at !== undefined && offset + CHUNK <= key.length; offset += CHUNK)
      at = at.children.get(key.slice(offset, offset + CHUNK));
    if (at?.ends.delete(key.slice(offset)) === true) this.#size--;
  }

  /** Calls `found` with each key that occurs in `text` at or after `from`, once per occurrence. */
  scan(text: string, from: number, found: (key: string) => void): void {
    for (let position = Math.max(0, from); position < text.length; position++) {
      let at: Node | undefined = this.#root;
      for (let offset = position; at !== undefined; offset += CHUNK) {
        if (at.ends.size > 0)
          for (const [tail, key] of at.ends) if (text.startsWith(tail, offset)) found(key);
        if (offset + CHUNK > text.length || at.children.size === 0) break;
        at = at.children.get(text.slice(offset, offset + CHUNK));
      }
    }
  }
}
