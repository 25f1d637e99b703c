/**
 * How memories are written into the `# CORE MEMORIES` block and held to a token budget. Pure functions; the
 * caching and the summarizer live in `core-memory.ts`.
 */
import type { TokenCounter } from "../tokens/token-counter.ts";
import type { Memory, MemoryKind } from "./memory-store.ts";

/** The heading of the block (the Coqui seed's name for it). */
export const CORE_MEMORIES_HEADING = "# CORE MEMORIES";

/** The order memories are given priority in: preferences and facts first, then notes, then session summaries. */
export const CORE_MEMORY_KIND_ORDER: readonly MemoryKind[] = [
  "preference",
  "fact",
  "note",
  "session-summary",
];

const groupTitles: Record<MemoryKind, string> = {
  preference: "## Preferences",
  fact: "## Facts",
  note: "## Notes",
  "session-summary": "## Earlier sessions",
};

/**
 * One memory as a list item; continuation lines are indented, and a session summary names its day and session.
 *
 * @example
 * memoryEntry(memory); // "- Prefers tabs over spaces"
 */
export function memoryEntry(memory: Memory): string {
  const lines = memory.content
    .trim()
    .split(/\r?\n/)
    .filter((line) => line.trim() !== "");
  const label =
    memory.kind === "session-summary"
      ? `${memory.updatedAt.slice(0, 10)}${memory.sourceSessionId ? ` (session ${memory.sourceSessionId})` : ""}: `
      : "";
  return [`- ${label}${lines[0] ?? ""}`, ...lines.slice(1).map((line) => `  ${line}`)].join("\n");
}

/**
 * Memories (in priority order) as grouped list items under `## Preferences`, `## Facts`, … headings.
 *
 * @example
 * renderMemories([preference, fact]); // "## Preferences\n- …\n\n## Facts\n- …"
 */
export function renderMemories(memories: readonly Memory[]): string {
  const groups: string[] = [];
  for (const kind of CORE_MEMORY_KIND_ORDER) {
    const entries = memories.filter((memory) => memory.kind === kind).map(memoryEntry);
    if (entries.length > 0) groups.push([groupTitles[kind], ...entries].join("\n"));
  }
  return groups.join("\n\n");
}

/**
 * The whole block: heading and body (empty when the body is).
 *
 * @example
 * coreMemoriesBlock("- Prefers tabs"); // "# CORE MEMORIES\n- Prefers tabs"
 */
export function coreMemoriesBlock(body: string): string {
  return body.trim() === "" ? "" : `${CORE_MEMORIES_HEADING}\n${body.trim()}`;
}

/**
 * As many memories as fit with the heading in `maxTokens`, taken in priority order (one that does not fit is
 * skipped so shorter later ones may still fit). Entry counts are summed first and the final block is counted
 * exactly, dropping the last entries while it is over (token counts are not quite additive).
 *
 * @example
 * const { memories, body } = selectWithinBudget(ordered, 500, counter);
 */
export function selectWithinBudget(
  memories: readonly Memory[],
  maxTokens: number,
  counter: TokenCounter,
): { memories: Memory[]; body: string } {
  const groupCost = Math.max(...Object.values(groupTitles).map((title) => counter.countText(`${title}\n\n`)));
  let spent = counter.countText(`${CORE_MEMORIES_HEADING}\n`);
  const chosen: Memory[] = [];
  const kindsSeen = new Set<MemoryKind>();
  for (const memory of memories) {
    const cost = counter.countText(`${memoryEntry(memory)}\n`) + (kindsSeen.has(memory.kind) ? 0 : groupCost);
    if (spent + cost > maxTokens) continue;
    spent += cost;
    kindsSeen.add(memory.kind);
    chosen.push(memory);
  }
  while (chosen.length > 0 && counter.countText(coreMemoriesBlock(renderMemories(chosen))) > maxTokens) {
    chosen.pop();
  }
  return { memories: chosen, body: renderMemories(chosen) };
}

/**
 * `body` cut so the block fits `maxTokens`: whole lines while they fit, then characters of the first line.
 *
 * @example
 * fitBody(summaryText, 300, counter);
 */
export function fitBody(body: string, maxTokens: number, counter: TokenCounter): string {
  const fits = (candidate: string) => counter.countText(coreMemoriesBlock(candidate)) <= maxTokens;
  const trimmed = body.trim();
  if (fits(trimmed)) return trimmed;
  const lines = trimmed.split("\n");
  let low = 0;
  let high = lines.length;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (fits(lines.slice(0, middle).join("\n"))) low = middle;
    else high = middle - 1;
  }
  if (low > 0) return lines.slice(0, low).join("\n").trim();
  const first = lines[0] ?? "";
  let shortest = 0;
  let longest = first.length;
  while (shortest < longest) {
    const middle = Math.ceil((shortest + longest) / 2);
    if (fits(first.slice(0, middle))) shortest = middle;
    else longest = middle - 1;
  }
  return first.slice(0, shortest).trim();
}
