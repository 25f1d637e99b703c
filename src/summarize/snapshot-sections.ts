/**
 * The sections of a summary snapshot. The LLM summarizer asks for these headings and the extractive summarizer
 * writes them, so a summary made by one can be updated by the other.
 */
export const SNAPSHOT_HEADINGS = {
  goal: "Goal & instructions",
  decisions: "Decisions",
  files: "Files",
  changes: "Changes",
  actions: "Actions",
  errors: "Errors & fixes",
  state: "Current state",
  next: "Next steps",
  earlier: "Earlier summary",
} as const;

/** Which section: a key of `SNAPSHOT_HEADINGS`. */
export type SnapshotSectionKey = keyof typeof SNAPSHOT_HEADINGS;

/** One section: its key and its list items (each may span several lines). */
export interface SnapshotSection {
  readonly key: SnapshotSectionKey;
  readonly items: readonly string[];
}

/** The line that reports what did not fit; recognised (and dropped) when a snapshot is parsed again. */
export const OMISSION_NOTE_PREFIX = "_Omitted to fit the budget:";

const HEADING_START = /^#{1,4}\s+/;

/**
 * The text of a Markdown heading line (closing `#`s and spaces removed), or undefined. Scanned by hand: a regex
 * with a lazy group before trailing whitespace backtracks quadratically on long space runs.
 */
function headingText(line: string): string | undefined {
  const start = HEADING_START.exec(line);
  if (start === null) return undefined;
  let end = line.length;
  while (end > start[0].length && /\s/.test(line[end - 1]!)) end--;
  while (end > start[0].length && line[end - 1] === "#") end--;
  while (end > start[0].length && /\s/.test(line[end - 1]!)) end--;
  return end > start[0].length ? line.slice(start[0].length, end) : undefined;
}

const BULLET = /^\s*[-*] /;
const keyByHeading = new Map(
  Object.entries(SNAPSHOT_HEADINGS).map(([key, heading]) => [
    heading.toLowerCase(),
    key as SnapshotSectionKey,
  ]),
);

/**
 * One list item as Markdown: `- ` before the first line, two spaces before the others.
 *
 * @example
 * renderItem("Fix it\nthen test") // "- Fix it\n  then test"
 */
export function renderItem(item: string): string {
  return `- ${item.split("\n").join("\n  ")}`;
}

/**
 * A snapshot as Markdown: one `## heading` per non-empty section, in the given order, then the omission note.
 *
 * @example
 * renderSnapshot([{ key: "files", items: ["src/a.ts (Read ×2)"] }]) // "## Files\n- src/a.ts (Read ×2)"
 */
export function renderSnapshot(sections: readonly SnapshotSection[], note?: string): string {
  const blocks = sections
    .filter((section) => section.items.length > 0)
    .map((section) => [`## ${SNAPSHOT_HEADINGS[section.key]}`, ...section.items.map(renderItem)].join("\n"));
  if (note) blocks.push(note);
  return blocks.join("\n\n");
}

/** A parsed snapshot: the items of each recognised section, in order. */
export type ParsedSnapshot = ReadonlyMap<SnapshotSectionKey, readonly string[]>;

/**
 * Reads a snapshot back into sections. Items are `- ` lines with their continuation lines (indented by two
 * spaces; a blank line inside an item is written as two spaces, an empty line ends the item); other text
 * under a recognised heading becomes one item per line; text before the first heading or under an unknown
 * heading goes to `earlier` line by line, so nothing of a foreign summary (an LLM's, a static marker) is lost.
 *
 * @example
 * parseSnapshot("## Files\n- src/a.ts").get("files") // ["src/a.ts"]
 */
export function parseSnapshot(text: string): ParsedSnapshot {
  const sections = new Map<SnapshotSectionKey, string[]>();
  let key: SnapshotSectionKey = "earlier";
  let current: string[] | undefined;
  const itemsOf = (sectionKey: SnapshotSectionKey) => {
    let items = sections.get(sectionKey);
    if (items === undefined) sections.set(sectionKey, (items = []));
    return items;
  };
  for (const line of text.split("\n")) {
    const heading = headingText(line);
    if (heading !== undefined) {
      const known = keyByHeading.get(heading.toLowerCase());
      key = known ?? "earlier";
      if (known === undefined) itemsOf(key).push(`${heading}:`);
      current = undefined;
      continue;
    }
    const continues = key !== "earlier" && line.startsWith("  ") && current !== undefined;
    if (!continues && (line.trim() === "" || line.startsWith(OMISSION_NOTE_PREFIX))) {
      current = undefined;
      continue;
    }
    const items = itemsOf(key);
    if (continues && current !== undefined) {
      current.push(line.slice(2));
      items[items.length - 1] = current.join("\n");
    } else if (key !== "earlier" && BULLET.test(line)) {
      current = [line.replace(BULLET, "")];
      items.push(current[0]!);
    } else {
      current = undefined;
      items.push(line.replace(BULLET, "").trim());
    }
  }
  return sections;
}

/**
 * Several parsed snapshots as one: each section's items in the order of the snapshots given.
 *
 * @example
 * mergeSnapshots([parseSnapshot(older), parseSnapshot(newer)]).get("files")
 */
export function mergeSnapshots(snapshots: readonly ParsedSnapshot[]): ParsedSnapshot {
  const merged = new Map<SnapshotSectionKey, string[]>();
  for (const snapshot of snapshots) {
    for (const [key, items] of snapshot) merged.set(key, [...(merged.get(key) ?? []), ...items]);
  }
  return merged;
}
