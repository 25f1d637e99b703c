import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { transcriptFiles, transcriptName, transcriptPath } from "../../../test/support/transcripts.ts";
import { messageSchema } from "../../model/schemas.ts";
import { pairToolCalls } from "../../model/tool-pairing.ts";
import { conversationStats } from "./conversation-stats.ts";
import { detectFormat } from "./detect-format.ts";
import { importTranscriptFile } from "./import-transcript.ts";
import type { TranscriptFormat } from "./imported-conversation.ts";
import {
  countClaudeCode,
  countCodex,
  countGeminiCli,
  countOpenAiChat,
  countSweAgent,
  type ExpectedCounts,
} from "./independent-counts.test-helpers.ts";

/**
 * The agents whose name a corpus folder starts with (FORMATS.md): where a folder names one, detection must agree.
 * A folder of another agent is detected like any file; nothing here lists the folders.
 */
const formatNamedByFolder: readonly [RegExp, TranscriptFormat][] = [
  [/(^|\/)claude-code(__|\/)/, "claude-code"],
  [/(^|\/)codex(__|\/)/, "codex"],
  [/(^|\/)gemini-cli(__|\/)/, "gemini-cli"],
  [/^swe-agent\//, "swe-agent"],
];

const independentCounters: Record<Exclude<TranscriptFormat, "ctxkit">, (text: string) => ExpectedCounts[]> = {
  "claude-code": countClaudeCode,
  codex: countCodex,
  "gemini-cli": countGeminiCli,
  openai: countOpenAiChat,
  "swe-agent": countSweAgent,
};

describe("importing every transcript of the corpus", () => {
  it("finds the corpus", () => {
    expect(transcriptFiles.length).toBeGreaterThanOrEqual(20);
  });

  for (const file of transcriptFiles) {
    const name = transcriptName(file);

    it(`${name}: detects its format, imports valid messages with counts matching an independent count`, async () => {
      const text = readFileSync(file, "utf8");
      const format = detectFormat(text, file);
      const named = formatNamedByFolder.find(([pattern]) => pattern.test(name))?.[1];
      if (named !== undefined) expect(format).toBe(named);
      const conversations = await importTranscriptFile(file);
      const expected = independentCounters[format as Exclude<TranscriptFormat, "ctxkit">](text);
      expect(conversations.map((conversation) => conversation.format)).toEqual(expected.map(() => format));
      expect(conversations.map((conversation) => conversationStats(conversation).messages)).toEqual(
        expected.map((counts) => counts.messages),
      );
      expect(conversations.map((conversation) => conversationStats(conversation).toolCalls)).toEqual(
        expected.map((counts) => counts.toolCalls),
      );
      for (const [index, conversation] of conversations.entries()) {
        // A call the transcript records no result for gets one that says so (and only such a call does).
        const noted = conversation.messages.flatMap((message) =>
          message.metadata?.["unanswered"] === undefined
            ? []
            : message.content.flatMap((block) => (block.type === "tool-result" ? [block.callId] : [])),
        );
        expect(noted.sort()).toEqual([...expected[index]!.unansweredCalls].sort());
        const outputTokens = expected[index]!.outputTokens;
        if (outputTokens !== undefined) {
          const imported = conversation.messages.reduce(
            (sum, message) => sum + (message.usage?.output ?? 0),
            0,
          );
          expect(imported, "provider-reported output tokens are kept exactly once").toBe(outputTokens);
        }
      }
    });

    it(`${name}: pairs every tool call with exactly one result and numbers messages in order`, async () => {
      for (const conversation of await importTranscriptFile(file)) {
        const { pairs, orphanResults } = pairToolCalls(conversation.messages);
        expect(pairs.filter((pair) => pair.result === undefined).map((pair) => pair.call.id)).toEqual([]);
        expect(orphanResults).toEqual([]);
        expect(pairs.every((pair) => pair.result!.toolName === pair.call.name)).toBe(true);
        conversation.messages.forEach((message, index) => {
          expect(messageSchema.safeParse(message).success).toBe(true);
          expect(message.seq).toBe(index);
          expect(message.sessionId).toBe(conversation.id);
          expect(message.turn).toBeGreaterThanOrEqual(conversation.messages[index - 1]?.turn ?? 0);
        });
        expect(new Set(conversation.messages.map((message) => message.id)).size).toBe(
          conversation.messages.length,
        );
      }
    });
  }
});

describe("figures computed outside the test code", () => {
  // Each figure comes from the command in its comment, run in ../shared/data/transcripts.
  const cases: { name: string; messages?: number; toolCalls: number; assistantMessages?: number }[] = [
    // jq '[.[].traj | length] | add' / jq '[.[].traj[].tool_calls // [] | length] | add'  tau-bench/gpt-4o-airline.json
    { name: "tau-bench/gpt-4o-airline.json", messages: 5308, toolCalls: 1164 },
    // jq -s '[.[] | select(.type=="response_item" and (.payload.type | IN("function_call","custom_tool_call","web_search_call")))] | length'
    {
      name: "codemie-code/codex/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
      toolCalls: 105,
    },
    // jq '[.messages[] | (.toolCalls // []) | length] | add'
    { name: "codemie-code/gemini-cli/session-2025-12-01T21-45-5b959dae.json", toolCalls: 10 },
    // Claude files with no abandoned branch holding tool calls, so the whole file is the active branch:
    // jq -r 'select(.type=="assistant") | .message.content[] | select(.type=="tool_use") | .id' FILE | sort -u | wc -l
    // jq -r 'select(.type=="assistant") | .message.id' FILE | sort -u | wc -l
    {
      name: "claude-code__marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
      toolCalls: 150,
      assistantMessages: 139,
    },
    { name: "claude-code__marot-spotter/subagent.jsonl", toolCalls: 16, assistantMessages: 12 },
    { name: "codemie-code/claude-code/session-196820da.jsonl", toolCalls: 65, assistantMessages: 47 },
  ];
  for (const { name, messages, toolCalls, assistantMessages } of cases) {
    it(name, async () => {
      const conversations = await importTranscriptFile(transcriptPath(name));
      const stats = conversations.map((conversation) => conversationStats(conversation));
      expect(stats.reduce((sum, entry) => sum + entry.toolCalls, 0)).toBe(toolCalls);
      if (messages !== undefined)
        expect(stats.reduce((sum, entry) => sum + entry.messages, 0)).toBe(messages);
      if (assistantMessages !== undefined) {
        const assistants = conversations.flatMap((conversation) =>
          conversation.messages.filter((message) => message.role === "assistant"),
        );
        expect(assistants.length).toBe(assistantMessages);
      }
    });
  }
});
