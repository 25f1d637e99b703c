import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { transcriptFiles, transcriptName } from "../../../test/support/transcripts.ts";
import { importTranscriptFile } from "./import-transcript.ts";

describe("importClaudeCode on the real sessions", () => {
  const claudeFiles = transcriptFiles.filter((file) => /claude-code/.test(transcriptName(file)));
  const knownPreTokens = [167_117, 167_731, 170_251];

  it("finds the compaction of each spotter main session, with its pre-compaction size and summary", async () => {
    const mainSessions = transcriptFiles.filter((file) =>
      /^claude-code__marot-spotter\/[0-9a-f-]{36}\.jsonl$/.test(transcriptName(file)),
    );
    const withBoundary = mainSessions.filter((file) =>
      readFileSync(file, "utf8").includes('"compact_boundary"'),
    );
    expect(withBoundary.length).toBeGreaterThanOrEqual(1);
    for (const file of withBoundary) {
      const [main] = await importTranscriptFile(file);
      const markers = main!.messages.filter((message) => message.kind === "marker");
      expect(markers).toHaveLength(1);
      const marker = markers[0]!;
      expect(marker.role).toBe("system");
      expect(marker.metadata?.["trigger"]).toBe("auto");
      expect(knownPreTokens).toContain(marker.metadata?.["preTokens"]);
      const summary = main!.messages[marker.seq + 1]!;
      expect(summary).toMatchObject({
        role: "user",
        kind: "summary",
        summaryOf: { fromSeq: 0, toSeq: marker.seq - 1 },
      });
      expect(summary.content[0]).toMatchObject({
        text: expect.stringMatching(/^This session is being continued/),
      });
      expect(marker.seq).toBeGreaterThan(50);
    }
  });

  it("keeps usage on every assistant message", async () => {
    for (const file of claudeFiles) {
      for (const conversation of await importTranscriptFile(file)) {
        const assistants = conversation.messages.filter((message) => message.role === "assistant");
        expect(
          assistants.every((message) => message.usage !== undefined && message.provider === "anthropic"),
        ).toBe(true);
        for (const { usage } of assistants)
          expect(usage!.input).toBeGreaterThanOrEqual((usage!.cacheRead ?? 0) + (usage!.cacheWrite ?? 0));
      }
    }
  });

  it("marks subagent files as sidechains and adds their meta.json description", async () => {
    const subagents = claudeFiles.filter((file) => /agent-[^/]+\.jsonl$/.test(file));
    expect(subagents.length).toBeGreaterThan(0);
    for (const file of subagents) {
      const conversations = await importTranscriptFile(file);
      expect(conversations.map((conversation) => conversation.sidechain)).toEqual([true]);
      expect(conversations[0]!.id).toMatch(/:agent-/);
    }
    const described = subagents.find((file) => /ef958aa1.*agent-a4ca7529859c158c2/.test(file));
    if (described) {
      const [conversation] = await importTranscriptFile(described);
      expect(conversation!.metadata?.["agent"]).toMatchObject({
        description: "Research Claude Code plan mode",
      });
    }
  });
});
