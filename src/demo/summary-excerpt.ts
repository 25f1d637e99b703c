import { parseSnapshot, SNAPSHOT_HEADINGS, type SnapshotSectionKey } from "../summarize/snapshot-sections.ts";

/** The sections a reader learns most from first; the file list last (paths alone say little). */
const ORDER: readonly SnapshotSectionKey[] = [
  "goal",
  "decisions",
  "changes",
  "errors",
  "state",
  "next",
  "actions",
  "files",
];

/**
 * A few lines that show what a summary kept: the first item of each of its sections, the goal and what was
 * decided and changed before the files it names (a list of files alone would say nothing of the work).
 *
 * @example
 * summaryExcerpt("## Files\n- src/a.ts\n- src/b.ts\n\n## Goal & instructions\n- Fix the parser");
 * // ["Goal & instructions: Fix the parser", "Files (2): src/a.ts, src/b.ts"]
 */
export function summaryExcerpt(summary: string, maxLines = 5): string[] {
  const sections = parseSnapshot(summary);
  const lines: string[] = [];
  for (const key of ORDER) {
    const items = sections.get(key) ?? [];
    if (items.length === 0) continue;
    const heading = SNAPSHOT_HEADINGS[key];
    const firstLine = (item: string) => item.split("\n")[0]!.trim();
    lines.push(
      key === "files"
        ? `${heading} (${items.length}): ${items.slice(0, 3).map(firstLine).join(", ")}${items.length > 3 ? ", …" : ""}`
        : `${heading}: ${firstLine(items[0]!)}${items.length > 1 ? ` (+${items.length - 1} more)` : ""}`,
    );
    if (lines.length === maxLines) break;
  }
  return lines;
}
