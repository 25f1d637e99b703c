import { readFile } from "node:fs/promises";
import { transcriptFilesOf } from "../../../../test/support/transcripts.ts";
import { describe, expect, it } from "vitest";
import { fixedImportOptions } from "../test-support/index.ts";
import { fromAnthropic } from "./from-anthropic.ts";
import { toAnthropic } from "./to-anthropic.ts";

type Block = { type: string; text?: string; content?: unknown };
type ApiMessage = { role: "user" | "assistant"; content: string | Block[] };

async function claudeCodeMessages(): Promise<ApiMessage[]> {
  const messages: ApiMessage[] = [];
  for (const file of transcriptFilesOf("claude-code")) {
    for (const line of (await readFile(file, "utf8")).split("\n")) {
      if (line.trim() === "") continue;
      const record = JSON.parse(line) as { type?: string; message?: ApiMessage };
      if ((record.type === "user" || record.type === "assistant") && record.message?.content !== undefined)
        messages.push({ role: record.message.role, content: record.message.content });
    }
  }
  return messages;
}

function usesToolSearch(message: ApiMessage): boolean {
  return JSON.stringify(message.content).includes('"type":"tool_reference"');
}

describe("Anthropic on real Claude Code transcripts", () => {
  it("reads every API message of the Claude Code sessions and writes it back unchanged", async () => {
    const messages = await claudeCodeMessages();
    expect(messages.length).toBeGreaterThan(2000);
    for (const message of messages) {
      const imported = fromAnthropic({ messages: [message] }, fixedImportOptions());
      expect(toAnthropic(imported).messages).toEqual([message]);
    }
  });

  it("keeps a tool search's tool_reference blocks in place, also when the result's text was rewritten", async () => {
    const message = (await claudeCodeMessages()).find(usesToolSearch)!;
    expect(message).toBeDefined();
    const imported = fromAnthropic({ messages: [message] }, fixedImportOptions());
    const references = JSON.stringify(message.content).match(/"type":"tool_reference"/g)!.length;
    // Governance may rewrite a result's text (a preview, a truncation): the references stay with it.
    const rewritten = imported.map((entry) =>
      entry.role !== "tool"
        ? entry
        : {
            ...entry,
            content: entry.content.map((block) =>
              block.type === "tool-result" ? { ...block, content: "[output offloaded]" } : block,
            ),
          },
    );
    const sent = JSON.stringify(toAnthropic(rewritten).messages);
    expect(sent.match(/"type":"tool_reference"/g)).toHaveLength(references);
    expect(sent).toContain("[output offloaded]");
  });
});
