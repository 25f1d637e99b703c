import type { ClaudeMessage, ClaudeRecord } from "./claude-code-records.ts";

/** A parsed Claude Code record with its line; `message` is set for `user` and `assistant` records. */
export interface ClaudeEntry {
  readonly line: number;
  readonly record: ClaudeRecord;
  readonly message: ClaudeMessage | undefined;
}

function isConversational(entry: ClaudeEntry): boolean {
  return entry.record.type === "user" || entry.record.type === "assistant";
}

/**
 * The records of the active branch, in file order.
 *
 * The branch is the `parentUuid` chain back from the last conversational record, continued through a compact
 * boundary's `logicalParentUuid`. The chain alone is not enough: Claude Code writes each block of a response as
 * its own line and hangs each tool result under the line of its own `tool_use`, so parallel tool calls fork
 * the tree even without a rewind. The branch therefore also takes every line of a response (same
 * `message.id`) that has a line on the chain, and the tool results answering those responses' calls.
 *
 * @example
 * const entries = activeBranch(streamEntries); // drops rewound prompts, keeps parallel tool calls
 */
export function activeBranch(entries: readonly ClaudeEntry[]): ClaudeEntry[] {
  const chain = chainFromLastLeaf(entries);
  const responseIds = new Set<string>();
  for (const index of chain) {
    const entry = entries[index]!;
    if (entry.record.type === "assistant") responseIds.add(responseId(entry));
  }
  const callIds = new Set<string>();
  const included = new Set(chain);
  entries.forEach((entry, index) => {
    if (entry.record.type !== "assistant" || !responseIds.has(responseId(entry))) return;
    included.add(index);
    for (const block of blockList(entry)) if (block.type === "tool_use") callIds.add(String(block["id"]));
  });
  entries.forEach((entry, index) => {
    if (entry.record.type !== "user" || included.has(index)) return;
    const answers = blockList(entry).some(
      (block) => block.type === "tool_result" && callIds.has(String(block["tool_use_id"])),
    );
    if (answers) included.add(index);
  });
  return entries.filter((_, index) => included.has(index));
}

/** The id grouping the lines of one API response: `message.id`, or the record's own uuid. */
export function responseId(entry: ClaudeEntry): string {
  return entry.message?.id ?? entry.record.uuid ?? `line-${entry.line}`;
}

function blockList(entry: ClaudeEntry): readonly { type: string; [key: string]: unknown }[] {
  const content = entry.message?.content;
  return Array.isArray(content) ? content : [];
}

function chainFromLastLeaf(entries: readonly ClaudeEntry[]): Set<number> {
  const indexOfUuid = new Map<string, number>();
  entries.forEach((entry, index) => {
    if (entry.record.uuid !== undefined) indexOfUuid.set(entry.record.uuid, index);
  });
  const chain = new Set<number>();
  let cursor = entries.findLastIndex(isConversational);
  while (cursor >= 0 && !chain.has(cursor)) {
    chain.add(cursor);
    const record = entries[cursor]!.record;
    const parent = record.parentUuid ?? record.logicalParentUuid;
    if (parent === null || parent === undefined) break;
    const parentIndex = indexOfUuid.get(parent);
    if (parentIndex !== undefined) cursor = parentIndex;
    // A compact boundary's logical parent is sometimes never written; the pre-compaction leaf is then the
    // conversational record appended just before the boundary.
    else if (record.parentUuid === null && record.logicalParentUuid) {
      const boundary = cursor;
      cursor = entries.findLastIndex((entry, index) => index < boundary && isConversational(entry));
    }
    // A parent in another file (a subagent's first record points into the main session) ends the chain.
    else break;
  }
  return chain;
}
