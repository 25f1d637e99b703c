import type { Message } from "../../model/message.ts";
import type { ImportedSessionSummary } from "../../store/jsonl/import-sessions-jsonl.ts";
import type { SearchHit, SessionRecord } from "../../store/session-store.ts";
import { formatNumber, formatTable } from "../format-table.ts";

/** `text` on one line, cut to `width` characters with an ellipsis. */
export function oneLine(text: string, width: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= width ? flat : `${flat.slice(0, width - 1)}…`;
}

/** Dollars with enough digits to see small costs. */
export function formatCost(cost: number): string {
  return `$${cost.toFixed(cost > 0 && cost < 0.01 ? 4 : 2)}`;
}

/**
 * The sessions as an aligned table: id, title, messages, turns, last update, cost.
 *
 * @example
 * io.stdout.write(formatSessionTable(page.sessions));
 */
export function formatSessionTable(sessions: readonly SessionRecord[]): string {
  if (sessions.length === 0) return "no sessions\n";
  const rows = sessions.map((session) => [
    session.id,
    oneLine(session.title ?? "", 50),
    session.messageCount,
    session.turnCount,
    session.updatedAt.slice(0, 19).replace("T", " "),
    formatCost(session.cost),
  ]);
  return `${formatTable(["id", "title", "messages", "turns", "updated", "cost"], rows)}\n`;
}

/** The text a message shows in one line: its text, tool calls and tool results. */
export function messagePreview(message: Message): string {
  const parts = message.content.map((block) => {
    switch (block.type) {
      case "text":
        return block.text;
      case "reasoning":
        return `(reasoning) ${block.text}`;
      case "tool-call":
        return `→ ${block.name}(${JSON.stringify(block.input) ?? ""})`;
      case "tool-result":
        return `← ${block.toolName}: ${typeof block.content === "string" ? block.content : JSON.stringify(block.content)}`;
      default:
        return `[${block.type}]`;
    }
  });
  return parts.join(" ");
}

/**
 * A session's fields, then its messages one per line (seq, turn, role, preview).
 *
 * @example
 * io.stdout.write(formatSessionDetails(session, await store.loadMessages(session.id)));
 */
export function formatSessionDetails(session: SessionRecord, messages: readonly Message[]): string {
  const { usage } = session;
  const fields: [string, string][] = [
    ["session", session.id],
    ["title", session.title ?? ""],
    ...(session.owner === undefined ? [] : [["owner", session.owner] as [string, string]]),
    ...(session.agent === undefined ? [] : [["agent", session.agent] as [string, string]]),
    ["created", session.createdAt],
    ["updated", session.updatedAt],
    ...(session.parentId === undefined
      ? []
      : [["forked from", `${session.parentId} at seq ${session.forkSeq ?? "?"}`] as [string, string]]),
    [
      "messages",
      `${formatNumber(session.messageCount)} stored, ${formatNumber(session.turnCount)} turns, next seq ${session.nextSeq}`,
    ],
    [
      "tokens",
      `input ${formatNumber(usage.input)}, output ${formatNumber(usage.output)}, cache read ` +
        `${formatNumber(usage.cacheRead)}, cache write ${formatNumber(usage.cacheWrite)}, reasoning ` +
        `${formatNumber(usage.reasoning)}`,
    ],
    ["cost", formatCost(session.cost)],
    ...(session.origin === undefined
      ? []
      : [["origin", `${session.origin.format} ${session.origin.source}`.trim()] as [string, string]]),
  ];
  const width = Math.max(...fields.map(([name]) => name.length));
  const header = fields.map(([name, value]) => `${name.padEnd(width)}  ${value}`).join("\n");
  const rows = messages.map((message) => [
    message.seq,
    message.turn,
    message.kind === undefined ? message.role : `${message.role} (${message.kind})`,
    oneLine(messagePreview(message), 90),
  ]);
  const table = rows.length === 0 ? "no messages" : formatTable(["seq", "turn", "role", "content"], rows);
  return `${header}\n\n${table}\n`;
}

/**
 * Search hits as a table: session, title, matching seq (empty for a title match), snippet.
 *
 * @example
 * io.stdout.write(formatSearchHits(await store.searchSessions("migration")));
 */
export function formatSearchHits(hits: readonly SearchHit[]): string {
  if (hits.length === 0) return "no matches\n";
  const rows = hits.map((hit) => [
    hit.session.id,
    oneLine(hit.session.title ?? "", 40),
    hit.seq === undefined ? "title" : String(hit.seq),
    oneLine(hit.snippet, 70),
  ]);
  return `${formatTable(["id", "title", "seq", "snippet"], rows)}\n`;
}

/**
 * Imported sessions as a table with a total row when there are several, then the existing sessions that were
 * skipped (`--skip-existing`), if any.
 *
 * @example
 * io.stdout.write(formatImported(result.sessions, result.skipped));
 */
export function formatImported(
  sessions: readonly ImportedSessionSummary[],
  skipped: readonly string[] = [],
): string {
  const note =
    skipped.length === 0
      ? ""
      : `skipped ${skipped.length} existing session${skipped.length === 1 ? "" : "s"}: ${skipped.join(", ")}\n`;
  if (sessions.length === 0) return `no new sessions imported\n${note}`;
  return formatImportedTable(sessions) + note;
}

function formatImportedTable(sessions: readonly ImportedSessionSummary[]): string {
  const rows: (string | number)[][] = sessions.map((session) => [
    session.id,
    session.messages,
    session.turns,
    session.toolCalls,
  ]);
  if (sessions.length > 1) {
    const sum = (pick: (session: ImportedSessionSummary) => number) =>
      sessions.reduce((total, session) => total + pick(session), 0);
    rows.push([
      `total (${sessions.length} sessions)`,
      sum((session) => session.messages),
      sum((session) => session.turns),
      sum((session) => session.toolCalls),
    ]);
  }
  return `${formatTable(["session", "messages", "turns", "tool calls"], rows)}\n`;
}
