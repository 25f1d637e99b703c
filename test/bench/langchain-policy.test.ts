import { describe, expect, it } from "vitest";
import { replayWithLangChain, type LangChainReplayOptions } from "../../bench/policies/langchain.ts";
import { importTranscriptFile } from "../../src/formats/transcripts/index.ts";
import { messageText, toolResultText } from "../../src/model/blocks.ts";
import type { Message } from "../../src/model/message.ts";
import { replayableMessages, requestPoints } from "../../src/replay/replay.ts";
import { createExtractiveSummarizer } from "../../src/summarize/index.ts";
import type { SummarizeRequest, Summarizer } from "../../src/summarize/summarizer.ts";
import { HistoryBuilder } from "../../src/test/history-builder.ts";
import { createEstimatingCounter } from "../../src/tokens/estimating-counter.ts";
import { transcriptsRoot } from "../support/transcripts.ts";

const counter = createEstimatingCounter();

/** A replay that records every view, every summary call and what the summarizer was asked and answered. */
async function replay(
  messages: readonly Message[],
  options: Partial<LangChainReplayOptions> = {},
): Promise<{
  views: { index: number; view: readonly Message[] }[];
  summaries: { inputTokens: number; outputTokens: number }[];
  asked: { request: SummarizeRequest; summary: string }[];
}> {
  const views: { index: number; view: readonly Message[] }[] = [];
  const summaries: { inputTokens: number; outputTokens: number }[] = [];
  const asked: { request: SummarizeRequest; summary: string }[] = [];
  const extractive = createExtractiveSummarizer({ counter });
  const summarizer: Summarizer = {
    name: "recording",
    async summarize(request) {
      const summary = await extractive.summarize(request);
      asked.push({ request, summary });
      return summary;
    },
  };
  await replayWithLangChain(messages, {
    contextWindow: 200_000,
    counter,
    summarizer,
    onRequest: (index, view) => void views.push({ index, view }),
    onSummary: (call) => void summaries.push(call),
    ...options,
  });
  return { views, summaries, asked };
}

/** The ids of what request `point` answers: the messages since the previous reply. */
function answeredIds(messages: readonly Message[], point: number): string[] {
  let start = point;
  while (start > 0 && messages[start - 1]!.role !== "assistant") start--;
  return messages
    .slice(start, point)
    .map((message) => message.id)
    .sort();
}

/** Every request made once, in order, each view ending with what its recorded reply answers. */
function expectEveryRequest(
  messages: readonly Message[],
  views: { index: number; view: readonly Message[] }[],
) {
  const points = requestPoints(messages);
  expect(views.map((entry) => entry.index)).toEqual(points.map((_, index) => index));
  views.forEach(({ index, view }) => {
    const answered = answeredIds(messages, points[index]!);
    expect(
      view
        .slice(view.length - answered.length)
        .map((message) => message.id)
        .sort(),
    ).toEqual(answered);
  });
}

function resultText(message: Message): string | undefined {
  const block = message.content.find((part) => part.type === "tool-result");
  return block?.type === "tool-result" ? toolResultText(block.content) : undefined;
}

describe("replayWithLangChain", () => {
  it("makes one request per recorded reply through the transcript's quirks", async () => {
    const builder = new HistoryBuilder()
      .system("You are a coding agent.")
      .user("Fix the parser")
      .message({
        role: "assistant",
        content: [{ type: "reasoning", text: "Read both files first.", signature: "sig" }],
      })
      .message({
        role: "assistant",
        content: [
          { type: "tool-call", id: "read-a", name: "read", input: { path: "src/a.ts" } },
          { type: "tool-call", id: "read-b", name: "read", input: { path: "src/b.ts" } },
        ],
      })
      // Results recorded in the other order, one of them in two messages.
      .message({
        role: "tool",
        content: [{ type: "tool-result", callId: "read-b", toolName: "read", content: "b1" }],
      })
      .message({
        role: "tool",
        content: [{ type: "tool-result", callId: "read-a", toolName: "read", content: "a" }],
      })
      .message({
        role: "tool",
        content: [{ type: "tool-result", callId: "read-b", toolName: "read", content: "b2" }],
      })
      // The user speaks in the middle of the run, with a screenshot.
      .message({
        role: "user",
        content: [
          { type: "text", text: "Also look at this" },
          { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" },
        ],
      })
      .step([{ name: "apply_patch", input: "*** Begin Patch", output: "patched" }], "Patching.")
      // An interrupted reply: its call never got a result.
      .message({
        role: "assistant",
        content: [{ type: "tool-call", id: "lost", name: "bash", input: { command: "npm test" } }],
      })
      .user("Stop, that is enough")
      .reply("Stopped.");
    const messages = builder.build();

    const { views, summaries } = await replay(messages);

    expectEveryRequest(messages, views);
    expect(summaries).toEqual([]);
    const last = views.at(-1)!.view;
    // The system prompt, the reasoning and the image reach the view as recorded.
    expect(last[0]).toBe(messages[0]);
    expect(last).toContain(messages[2]);
    expect(last).toContain(messages[7]);
    // Both messages of read-b's result, and no result for the interrupted call.
    expect(last.filter((message) => resultText(message)?.startsWith("b")).map(resultText)).toEqual([
      "b1",
      "b2",
    ]);
    expect(
      last.some((message) => message.content.some((b) => b.type === "tool-result" && b.callId === "lost")),
    ).toBe(false);
    expect(last).toHaveLength(messages.length - 1);
  });

  it("summarises with the shared summarizer once the trigger is passed", async () => {
    const builder = new HistoryBuilder().user("Refactor the storage layer");
    for (let step = 0; step < 12; step++)
      builder.step([
        {
          name: "read",
          input: { path: `src/store/file-${step}.ts` },
          output: `export const v${step} = ${step};\n`.repeat(20),
        },
      ]);
    const messages = builder.reply("Done.").build();

    const { views, summaries, asked } = await replay(messages, {
      trigger: { tokens: 500 },
      keep: { messages: 4 },
    });

    expectEveryRequest(messages, views);
    expect(summaries.length).toBeGreaterThan(0);
    for (const call of summaries) {
      expect(call.inputTokens).toBeGreaterThan(0);
      expect(call.outputTokens).toBeGreaterThan(0);
    }
    // The summarizer read the recorded messages the prompt held (the task among the first ones).
    expect(asked[0]!.request.messages.map((message) => message.id)).toContain(messages[0]!.id);
    // A later request starts with LangChain's summary message carrying the summarizer's text, then 4 kept.
    const last = views.at(-1)!.view;
    expect(last[0]!.kind).toBe("summary");
    expect(messageText(last[0]!)).toBe(
      `Here is a summary of the conversation to date:\n\n${asked.at(-1)!.summary.trim()}`,
    );
    expect(asked.at(-1)!.request.previousSummary).toBeDefined();
    expect(last.length).toBeLessThan(messages.length - 1);
  });

  it("clears older tool results at the middleware's defaults once a request passes 100k tokens", async () => {
    const builder = new HistoryBuilder().user("Audit the logs");
    for (let step = 0; step < 8; step++)
      builder.step([
        { name: "cat", input: { path: `log-${step}.txt` }, output: `line ${step}\n`.repeat(8_000) },
      ]);
    const messages = builder.reply("Audited.").build();

    const { views, summaries } = await replay(messages);

    expectEveryRequest(messages, views);
    expect(summaries).toEqual([]);
    const results = views.at(-1)!.view.filter((message) => message.role === "tool");
    expect(results.map(resultText).slice(0, 5)).toEqual(Array(5).fill("[cleared]"));
    const newest = messages.filter((message) => message.role === "tool").slice(-3);
    expect(results.slice(-3)).toEqual(newest);
    // An early request, under the trigger, had nothing cleared.
    expect(views[3]!.view.some((message) => resultText(message) === "[cleared]")).toBe(false);
  });

  it("replays a recorded Claude Code session", async () => {
    const [conversation] = await importTranscriptFile(
      `${transcriptsRoot}claude-code__marot-spotter/tool_heavy.jsonl`,
    );
    const messages = replayableMessages(conversation!.messages);

    const asDocumented = await replay(messages);
    expectEveryRequest(messages, asDocumented.views);
    expect(asDocumented.summaries).toEqual([]);

    const lowTrigger = await replay(messages, { trigger: { tokens: 500 }, keep: { messages: 4 } });
    expectEveryRequest(messages, lowTrigger.views);
    expect(lowTrigger.summaries.length).toBeGreaterThan(0);
    expect(lowTrigger.views.at(-1)!.view[0]!.kind).toBe("summary");
  });
});
