import {
  OMISSION_NOTE_PREFIX,
  renderItem,
  renderSnapshot,
  SNAPSHOT_HEADINGS,
  type SnapshotSectionKey,
} from "./snapshot-sections.ts";

/** Section order of a rendered snapshot. */
export const SECTION_ORDER: readonly SnapshotSectionKey[] = [
  "goal",
  "earlier",
  "decisions",
  "files",
  "changes",
  "actions",
  "errors",
  "state",
  "next",
];

/** One item that may go into a snapshot, and how readily it is given up for the budget. */
export interface SnapshotCandidate {
  readonly section: SnapshotSectionKey;
  readonly text: string;
  /** Lower tiers are dropped first. */
  readonly tier: number;
  /** Within a tier, lower ranks are dropped first (e.g. older items, items off the focus). */
  readonly rank: number;
  /** What the omission note calls this kind of item, e.g. `mentioned files`. */
  readonly kind: string;
}

/** A fitted snapshot and what it had to leave out. */
export interface FittedSnapshot {
  readonly text: string;
  /** Kind → number of items dropped. */
  readonly omitted: ReadonlyMap<string, number>;
}

function omissionNote(omitted: ReadonlyMap<string, number>): string {
  if (omitted.size === 0) return "";
  const parts = [...omitted].map(([kind, count]) => `${count} ${kind}`);
  return `${OMISSION_NOTE_PREFIX} ${parts.join(", ")}._`;
}

/**
 * Renders the candidates (in their given order, grouped by section) within `maxTokens`, dropping the lowest
 * tier first and, inside a tier, the lowest rank; a closing note says how many items of each kind were
 * dropped. Item costs are counted once and summed; when the real count of the rendered text differs from the
 * sum, the difference is reserved and fitting runs again.
 *
 * @example
 * fitSnapshot(candidates, 800, (text) => Math.ceil(text.length / 4)).text
 */
export function fitSnapshot(
  candidates: readonly SnapshotCandidate[],
  maxTokens: number,
  countText: (text: string) => number,
): FittedSnapshot {
  const itemCost = candidates.map((candidate) => countText(`${renderItem(candidate.text)}\n`));
  const headingCost = (key: SnapshotSectionKey) => countText(`## ${SNAPSHOT_HEADINGS[key]}\n\n`);
  const perSection = new Map<SnapshotSectionKey, number>();
  for (const candidate of candidates) {
    perSection.set(candidate.section, (perSection.get(candidate.section) ?? 0) + 1);
  }
  let estimate = itemCost.reduce((sum, cost) => sum + cost, 0);
  for (const key of perSection.keys()) estimate += headingCost(key);
  const dropOrder = candidates
    .map((candidate, index) => ({ candidate, index }))
    .sort((a, b) => a.candidate.tier - b.candidate.tier || a.candidate.rank - b.candidate.rank)
    .map(({ index }) => index);
  const dropped = new Set<number>();
  const omitted = new Map<string, number>();
  let next = 0;
  let slack = 0;
  const dropOne = () => {
    const index = dropOrder[next++]!;
    const candidate = candidates[index]!;
    dropped.add(index);
    estimate -= itemCost[index]!;
    omitted.set(candidate.kind, (omitted.get(candidate.kind) ?? 0) + 1);
    const left = perSection.get(candidate.section)! - 1;
    perSection.set(candidate.section, left);
    if (left === 0) estimate -= headingCost(candidate.section);
  };
  for (;;) {
    while (next < dropOrder.length && estimate + countText(omissionNote(omitted)) + slack > maxTokens) {
      dropOne();
    }
    const text = render(candidates, dropped, omissionNote(omitted));
    const actual = countText(text);
    if (actual <= maxTokens) return { text, omitted };
    if (next >= dropOrder.length) return { text: clipToBudget(text, maxTokens, countText), omitted };
    slack += Math.max(1, actual - maxTokens);
  }
}

function render(
  candidates: readonly SnapshotCandidate[],
  dropped: ReadonlySet<number>,
  note: string,
): string {
  const sections = SECTION_ORDER.map((key) => ({
    key,
    items: candidates
      .filter((candidate, index) => candidate.section === key && !dropped.has(index))
      .map((candidate) => candidate.text),
  }));
  return renderSnapshot(sections, note);
}

function clipToBudget(text: string, maxTokens: number, countText: (text: string) => number): string {
  let clipped = text;
  while (clipped.length > 0 && countText(clipped) > maxTokens) {
    clipped = clipped.slice(0, Math.floor(clipped.length * 0.8));
  }
  return clipped;
}
