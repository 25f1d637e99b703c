import { Option } from "commander";
import { conversationStats, type ConversationStats } from "../../formats/transcripts/conversation-stats.ts";
import { importTranscriptFile } from "../../formats/transcripts/import-transcript.ts";
import {
  TRANSCRIPT_FORMATS,
  type TranscriptFormat,
} from "../../formats/transcripts/imported-conversation.ts";
import type { CommandRegistration } from "../program.ts";

const columns: readonly { title: string; value: (stats: ConversationStats) => string | number }[] = [
  { title: "conversation", value: (stats) => stats.id },
  { title: "format", value: (stats) => stats.format },
  { title: "messages", value: (stats) => stats.messages },
  { title: "turns", value: (stats) => stats.turns },
  { title: "tool calls", value: (stats) => stats.toolCalls },
  { title: "tool output chars", value: (stats) => stats.toolResultChars },
  { title: "tokens", value: (stats) => stats.tokens },
];

/**
 * The stats as an aligned table: text columns left-aligned, numbers right-aligned, with a total row when the
 * file holds several conversations.
 *
 * @example
 * io.stdout.write(formatStatsTable(conversations.map((conversation) => conversationStats(conversation))));
 */
export function formatStatsTable(stats: readonly ConversationStats[]): string {
  const rows = stats.map((entry) => columns.map((column) => column.value(entry)));
  if (stats.length > 1) {
    const sum = (pick: (entry: ConversationStats) => number) =>
      stats.reduce((total, entry) => total + pick(entry), 0);
    rows.push([
      `total (${stats.length} conversations)`,
      "",
      sum((entry) => entry.messages),
      sum((entry) => entry.turns),
      sum((entry) => entry.toolCalls),
      sum((entry) => entry.toolResultChars),
      sum((entry) => entry.tokens),
    ]);
  }
  const cells = [columns.map((column) => column.title), ...rows.map((row) => row.map(String))];
  const widths = columns.map((_, index) => Math.max(...cells.map((row) => row[index]!.length)));
  const numeric = columns.map((_, index) => index >= 2);
  const lines = cells.map((row) =>
    row
      .map((cell, index) => (numeric[index] ? cell.padStart(widths[index]!) : cell.padEnd(widths[index]!)))
      .join("  ")
      .trimEnd(),
  );
  return `${lines.join("\n")}\n`;
}

/**
 * `ctxkit stats <file> [--format …] [--json]`: imports a transcript and prints, per conversation, its
 * messages, turns, tool calls, tool-output characters and an estimated token count.
 *
 * @example
 * createProgram([registerStats], io).parseAsync(["stats", "session.jsonl", "--json"], { from: "user" });
 */
export const registerStats: CommandRegistration = (program, io) => {
  program
    .command("stats")
    .description("count the messages, turns, tool calls and tokens of a transcript")
    .argument("<file>", "transcript file")
    .addOption(
      new Option("--format <format>", "transcript format")
        .choices([...TRANSCRIPT_FORMATS, "auto"])
        .default("auto"),
    )
    .option("--json", "print JSON instead of a table")
    .action(async (file: string, options: { format: TranscriptFormat | "auto"; json?: boolean }) => {
      const conversations = await importTranscriptFile(file, { format: options.format });
      const stats = conversations.map((conversation) => conversationStats(conversation));
      io.stdout.write(
        options.json === true
          ? `${JSON.stringify({ conversations: stats }, null, 2)}\n`
          : formatStatsTable(stats),
      );
    });
};
