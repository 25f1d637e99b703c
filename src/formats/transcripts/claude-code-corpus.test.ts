import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { transcriptFiles, transcriptName } from "../../../test/support/transcripts.ts";
import { importTranscriptFile } from "./import-transcript.ts";

describe("importClaudeCode on the real sessions", () => {
  const claudeFiles = transcriptFiles.filter((file) => /claude-code/.test(transcriptName(file)));

  it("finds every compaction of the main sessions, with its pre-compaction size and summary", async () => {
    const mainSessions = claudeFiles.filter((file) => !/agent-[^/]+\.jsonl$/.test(file));
    const withBoundary = mainSessions.filter((file) =>
      readFileSync(file, "utf8").includes('"compact_boundary"'),
    );
    // The spotter sessions hold one each; the Entire checkpoints hold one or two.
    expect(withBoundary.length).toBeGreaterThanOrEqual(3);
    for (const file of withBoundary) {
      const recorded = [...readFileSync(file, "utf8").matchAll(/"preTokens":(\d+)/g)].map((match) =>
        Number(match[1]),
      );
      const [main] = await importTranscriptFile(file);
      const markers = main!.messages.filter((message) => message.kind === "marker");
      expect(markers.map((marker) => marker.metadata?.["preTokens"])).toEqual(recorded);
      let segmentStart = 0;
      for (const marker of markers) {
        expect(marker.role).toBe("system");
        expect(["auto", "manual"]).toContain(marker.metadata?.["trigger"]);
        const summary = main!.messages[marker.seq + 1]!;
        expect(summary).toMatchObject({
          role: "user",
          kind: "summary",
          summaryOf: { fromSeq: segmentStart, toSeq: marker.seq - 1 },
        });
        expect(summary.content[0]).toMatchObject({
          text: expect.stringMatching(/^This session is being continued/),
        });
        expect(marker.seq - segmentStart).toBeGreaterThan(50);
        segmentStart = summary.seq;
      }
    }
  });

  it("keeps usage on every assistant message but those Claude Code wrote itself", async () => {
    for (const file of claudeFiles) {
      for (const conversation of await importTranscriptFile(file)) {
        const assistants = conversation.messages.filter(
          (message) => message.role === "assistant" && message.model !== "<synthetic>",
        );
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
