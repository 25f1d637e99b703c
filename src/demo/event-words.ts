import type { GovernanceEvent } from "../governance/events.ts";

/** What each kind of governance event did, in words a reader of the demo knows (the count goes in front). */
const WORDS: Readonly<Record<GovernanceEvent["type"], readonly [one: string, many: string]>> = {
  "reasoning-stripped": ["request dropped older reasoning", "requests dropped older reasoning"],
  "binaries-replaced": ["request replaced older images by notes", "requests replaced older images by notes"],
  "compact-summaries-used": [
    "request sent a tool's short summary of its output",
    "requests sent tools' short summaries of their outputs",
  ],
  "tool-output-truncated": [
    "long tool output cut to its head and tail",
    "long tool outputs cut to head and tail",
  ],
  "tool-inputs-elided": ["request shortened older tool arguments", "requests shortened older tool arguments"],
  "tool-output-offloaded": [
    "time large tool outputs were set aside (a preview stays; the agent can read them back)",
    "times large tool outputs were set aside (a preview stays; the agent can read them back)",
  ],
  "tool-output-capped": ["oversized tool output capped", "oversized tool outputs capped"],
  "turns-trimmed": ["time the oldest turns were dropped", "times the oldest turns were dropped"],
  "small-history-compressed": ["time a small history was compressed", "times a small history was compressed"],
  "compaction-start": ["compaction started", "compactions started"],
  "compaction-end": [
    "compaction (older work summarised, originals kept in the store)",
    "compactions (older work summarised, originals kept in the store)",
  ],
  "compaction-rolled-back": ["compaction rolled back", "compactions rolled back"],
  "summarizer-failed": ["summarizer failure", "summarizer failures"],
  "checkpoint-skipped": ["checkpoint skipped", "checkpoints skipped"],
  "overflow-prevented": [
    "request kept from overflowing the window",
    "requests kept from overflowing the window",
  ],
  "budget-exit-notice": ["budget notice to the agent", "budget notices to the agent"],
  "orphans-repaired": ["unmatched tool call repaired", "unmatched tool calls repaired"],
  "loop-detected": ["loop detected", "loops detected"],
  "emergency-recovery": ["emergency recovery", "emergency recoveries"],
};

/** Events a reader does not need: the start of a compaction (its end is counted), a checkpoint not taken. */
const QUIET = new Set<string>(["compaction-start", "checkpoint-skipped"]);

/**
 * What governance did, as a sentence's list: "11 compactions (…), 55 times large tool outputs were set aside …".
 *
 * @example
 * eventSummary({ "compaction-end": 2 }); // "2 compactions (older work summarised, originals kept in the store)"
 */
export function eventSummary(counts: Readonly<Record<string, number>>): string {
  const parts = Object.entries(counts)
    .filter(([type, count]) => count > 0 && !QUIET.has(type))
    .sort(([a], [b]) => (a === "compaction-end" ? -1 : b === "compaction-end" ? 1 : 0))
    .map(([type, count]) => {
      const words = WORDS[type as GovernanceEvent["type"]];
      return words === undefined ? `${type} ×${count}` : `${count} ${count === 1 ? words[0] : words[1]}`;
    });
  return parts.length === 0 ? "nothing needed changing" : parts.join("; ");
}
