// Claude Code's context policy, from its documented behaviour (../shared/DESIGN.md, "What peers do").
import { leadingSystemEnd } from "../../src/governance/compaction-plan.ts";
import type { Processor } from "../../src/governance/processor.ts";
import { toolResultText } from "../../src/model/blocks.ts";
import type { Message } from "../../src/model/message.ts";
import { commitCompaction, newestStepStart, payloadTokens, summaryOf, windowScale } from "./peer-support.ts";

const READ_TOOLS = /^(read|read_file|view|cat)$/i;
/** After a compaction Claude Code re-reads up to 5 recent files, ≤ 5k tokens each, ≤ 50k in all (scaled). */
const MAX_FILES = 5;
const FILE_TOKENS = 5_000;
const FILES_BUDGET = 50_000;

function pathOf(input: unknown): string | undefined {
  if (typeof input !== "object" || input === null) return undefined;
  const record = input as Record<string, unknown>;
  const path = record["file_path"] ?? record["path"] ?? record["filename"];
  return typeof path === "string" ? path : undefined;
}

/** The newest read of each of the most recently read files, clipped to the budgets. */
function rereadFiles(messages: readonly Message[], charsPerToken: number, scale: number): string {
  const calls = new Map<string, string>();
  for (const message of messages)
    for (const block of message.content)
      if (block.type === "tool-call" && READ_TOOLS.test(block.name)) {
        const path = pathOf(block.input);
        if (path !== undefined) calls.set(block.id, path);
      }
  const files = new Map<string, string>();
  for (let index = messages.length - 1; index >= 0 && files.size < MAX_FILES; index--)
    for (const block of messages[index]!.content)
      if (block.type === "tool-result" && calls.has(block.callId) && !files.has(calls.get(block.callId)!))
        files.set(calls.get(block.callId)!, toolResultText(block.content));
  let budget = FILES_BUDGET * scale * charsPerToken;
  const parts: string[] = [];
  for (const [path, text] of files) {
    const clipped = text.slice(0, Math.min(FILE_TOKENS * charsPerToken, budget));
    if (clipped.length === 0) break;
    budget -= clipped.length;
    parts.push(`\n\n[Re-read after compaction: ${path}]\n${clipped}`);
  }
  return parts.join("");
}

/** Auto-compaction near full (~167k of 200k): one long structured summary, then recently read files re-read. */
export const claudeCodeCompaction: Processor = {
  name: "claude-code-compaction",
  async process(messages, context) {
    if (payloadTokens(messages, context) <= 0.835 * context.window.contextWindow) return messages;
    const start = leadingSystemEnd(messages);
    const newest = newestStepStart(messages);
    const end = newest < messages.length && newest > start ? newest : messages.length;
    if (end <= start) return messages;
    const replaced = messages.slice(start, end);
    const summary = await summaryOf(replaced, context, rereadFiles(replaced, 4, windowScale(context)));
    const next = [...messages.slice(0, start), summary, ...messages.slice(end)];
    return commitCompaction(messages, next, context, "near full", false);
  },
};
