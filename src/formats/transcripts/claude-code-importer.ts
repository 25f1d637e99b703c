import { activeBranch, type ClaudeEntry } from "./claude-code-active-branch.ts";
import type { TextOrLines } from "../text-lines.ts";
import { ClaudeCodeConverter } from "./claude-code-converter.ts";
import { claudeMessageSchema, claudeRecordSchema } from "./claude-code-records.ts";
import type { ImportedConversation } from "./imported-conversation.ts";
import { definedEntries } from "./json-or-string.ts";
import { parseJsonLines } from "./json-lines.ts";
import { expectShape } from "./record-shape.ts";
import { sourceStem } from "./source-name.ts";

const expectedRecord = "a Claude Code session record";

/**
 * Imports a Claude Code session JSONL file: the active branch of the main conversation, and each subagent
 * (sidechain) found in the file as its own conversation with `sidechain: true`. See `activeBranch` for how
 * the branch is chosen and `ClaudeCodeConverter` for how records become messages.
 *
 * @example
 * const [main] = importClaudeCode(readFileSync(path, "utf8"), path);
 */
export function importClaudeCode(text: TextOrLines, source: string): ImportedConversation[] {
  const streams = new Map<string, ClaudeEntry[]>();
  const titles = new Map<string, string>();
  for (const { line, value } of parseJsonLines(text, source, expectedRecord)) {
    const record = expectShape(claudeRecordSchema, value, { source, line }, expectedRecord);
    if (record.type === "summary" && record.leafUuid && record.summary)
      titles.set(record.leafUuid, record.summary);
    if (record.uuid === undefined) continue;
    const conversational = record.type === "user" || record.type === "assistant";
    const message = conversational
      ? expectShape(
          claudeMessageSchema,
          (value as { message?: unknown }).message,
          { source, line, path: "message" },
          expectedRecord,
        )
      : undefined;
    const key = record.isSidechain === true ? `agent:${record.agentId ?? ""}` : "main";
    const stream = streams.get(key) ?? [];
    stream.push({ line, record, message });
    streams.set(key, stream);
  }
  const conversations: ImportedConversation[] = [];
  for (const entries of streams.values()) {
    const branch = activeBranch(entries);
    if (branch.length === 0) continue;
    conversations.push(toConversation(branch, source, titles));
  }
  return conversations;
}

function toConversation(
  branch: readonly ClaudeEntry[],
  source: string,
  titles: ReadonlyMap<string, string>,
): ImportedConversation {
  const first = branch.find((entry) => entry.message !== undefined)?.record ?? branch[0]!.record;
  const sessionId = first.sessionId ?? sourceStem(source);
  const sidechain = first.isSidechain === true;
  const id = sidechain ? `${sessionId}:agent-${first.agentId ?? sourceStem(source)}` : sessionId;
  const converter = new ClaudeCodeConverter(id, source);
  for (const entry of branch) converter.add(entry);
  let title: string | undefined;
  for (const entry of branch) title = titles.get(entry.record.uuid ?? "") ?? title;
  const envelope = first as Record<string, unknown>;
  return {
    id,
    format: "claude-code",
    source,
    ...(title !== undefined ? { title } : {}),
    messages: converter.finish(),
    ...(sidechain ? { sidechain } : {}),
    metadata: definedEntries({
      sessionId: first.sessionId ?? undefined,
      agentId: first.agentId ?? undefined,
      cwd: stringField(envelope["cwd"]),
      gitBranch: stringField(envelope["gitBranch"]),
      version: stringField(envelope["version"]),
      slug: stringField(envelope["slug"]),
    }),
  };
}

function stringField(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}
