import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { fixedImportOptions } from "../test-support/index.ts";
import { fromOpenAIChat } from "./from-openai-chat.ts";
import { toOpenAIChat } from "./to-openai-chat.ts";

const corpus = new URL(
  "../../../../../shared/data/transcripts/tau-bench/gpt-4o-airline.json",
  import.meta.url,
);

interface Episode {
  readonly task_id: number;
  readonly traj: readonly { role: string; tool_calls?: { function: { name: string } }[] }[];
}

describe("OpenAI chat on real tau-bench trajectories", () => {
  it("imports all 200 episodes and exports every one unchanged", async () => {
    const episodes = JSON.parse(await readFile(corpus, "utf8")) as Episode[];
    expect(episodes).toHaveLength(200);
    for (const episode of episodes) {
      const messages = fromOpenAIChat(episode.traj, fixedImportOptions());
      expect(toOpenAIChat(messages, { toolMessageNames: true })).toEqual(episode.traj);
      // Each simulated-customer message opens a turn.
      const userCount = episode.traj.filter((message) => message.role === "user").length;
      expect(messages.at(-1)?.turn).toBe(userCount);
      // gpt-4o reuses call ids across steps here, so a result answers the latest call with its id.
      const called = new Map<string, string>();
      for (const message of messages)
        for (const block of message.content) {
          if (block.type === "tool-call") called.set(block.id, block.name);
          if (block.type === "tool-result") expect(block.toolName).toBe(called.get(block.callId));
        }
    }
  });
});
