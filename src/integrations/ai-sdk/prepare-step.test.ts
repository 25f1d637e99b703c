import type {
  LanguageModelV4CallOptions,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
} from "@ai-sdk/provider";
import { generateText, simulateReadableStream, stepCountIs, streamText, type ModelMessage } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import type { PreparedRequest } from "../../engine/prepared-request.ts";
import { FakeSummarizer } from "../../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../../test/fake-token-counter.ts";
import { memoryEngineOf } from "../shared/memory-engine.ts";
import { ctxkitPrepareStep } from "./prepare-step.ts";
import { readFileCall, scriptedReader, tools, usage } from "./scripted-reader.test-helpers.ts";

function idsOf(prompt: LanguageModelV4Prompt, role: "assistant" | "tool"): string[] {
  return prompt.flatMap((message) =>
    message.role === role
      ? message.content.flatMap((part) =>
          part.type === "tool-call" || part.type === "tool-result" ? [part.toolCallId] : [],
        )
      : [],
  );
}

function options(requests: PreparedRequest[]) {
  return {
    contextWindow: 24_000,
    reservedOutputTokens: 2_000,
    counter: new FakeTokenCounter(),
    summarizer: new FakeSummarizer(),
    tools,
    onRequest: (request: PreparedRequest) => requests.push(request),
  };
}

describe("ctxkitPrepareStep", () => {
  it("governs every step of a generateText agent loop inside the window, with a stable prefix between checkpoints", async () => {
    const requests: PreparedRequest[] = [];
    const base = scriptedReader(30, () => requests.at(-1)!.tokens.total);
    const prepareStep = ctxkitPrepareStep(options(requests));
    const result = await generateText({
      model: base,
      tools,
      prompt: "Read every file in src/",
      prepareStep,
      stopWhen: stepCountIs(40),
    });
    expect(result.text).toBe("all files read");
    const calls = base.doGenerateCalls;
    expect(calls).toHaveLength(31);
    expect(requests).toHaveLength(31);
    // Ungoverned, 30 reads of ~2.4k tokens would be ~70k tokens; every governed request fits the window.
    const counter = new FakeTokenCounter();
    expect(Math.max(...calls.map((call) => counter.countText(JSON.stringify(call.prompt))))).toBeLessThan(
      24_000,
    );
    expect(Math.max(...requests.map((request) => request.tokens.total))).toBeLessThanOrEqual(22_000);
    expect(requests.filter((request) => request.checkpoint).length).toBeGreaterThan(0);
    for (const call of calls) {
      expect(new Set(idsOf(call.prompt, "tool"))).toEqual(new Set(idsOf(call.prompt, "assistant")));
      expect(call.prompt.find((message) => message.role === "user")?.content).toEqual([
        { type: "text", text: "Read every file in src/" },
      ]);
    }
    // Between checkpoints request N+1 starts with request N, part for part (the prompt cache keeps hitting). Here
    // about every other step is a checkpoint: offloading a read that is never read again costs only a rewrite of
    // the last few parts, and the cache arithmetic takes it.
    let stable = 0;
    for (let n = 1; n < calls.length; n++) {
      if (requests[n]!.checkpoint) continue;
      const previous = calls[n - 1]!.prompt;
      expect(calls[n]!.prompt.slice(0, previous.length)).toEqual(previous);
      stable++;
    }
    expect(stable).toBeGreaterThan(10);
    expect(prepareStep.governor.view.length).toBeGreaterThan(0);
  });

  it("records each step's reported input tokens back: later requests are anchored on them", async () => {
    const requests: PreparedRequest[] = [];
    // The provider bills twice what the local counter sees (e.g. a tokenizer that splits more finely).
    const base = scriptedReader(2, () => 2 * requests.at(-1)!.tokens.total);
    await generateText({
      model: base,
      tools,
      prompt: "Read two files",
      prepareStep: ctxkitPrepareStep({ ...options(requests), contextWindow: 200_000 }),
      stopWhen: stepCountIs(5),
    });
    expect(requests).toHaveLength(3);
    expect(requests[0]!.tokens.anchoredTotal).toBeUndefined();
    for (const request of requests.slice(1)) {
      expect(request.checkpoint).toBe(false);
      expect(request.tokens.anchoredTotal).toBe(2 * request.tokens.total);
    }
  });

  it("continues the same governed view in the chat's next generateText call, sending the same objects", async () => {
    const requests: PreparedRequest[] = [];
    const base = scriptedReader(2, () => requests.at(-1)!.tokens.total);
    const prepareStep = ctxkitPrepareStep({ ...options(requests), contextWindow: 200_000 });
    const first: ModelMessage[] = [{ role: "user", content: "Read two files" }];
    const firstResult = await generateText({
      model: base,
      tools,
      messages: first,
      prepareStep,
      stopWhen: stepCountIs(5),
    });
    const counted = prepareStep.governor.tokenizerCalls;
    const second: ModelMessage[] = [
      ...first,
      ...firstResult.responseMessages,
      { role: "user", content: "Thanks. Anything else?" },
    ];
    const seen: ModelMessage[][] = [];
    await generateText({
      model: base,
      tools,
      messages: second,
      prepareStep: async (step) => {
        const prepared = await prepareStep(step);
        seen.push(step.messages, prepared.messages);
        return prepared;
      },
    });
    expect(requests).toHaveLength(4);
    // Nothing was rebuilt: no checkpoint, and only the reply, the new question and the preview of the output that
    // just left the protection window (prepared ahead for the next checkpoint) were counted.
    expect(requests[3]!.checkpoint).toBe(false);
    expect(prepareStep.governor.tokenizerCalls - counted).toBe(3);
    expect(seen[1]).toHaveLength(second.length);
    seen[1]!.forEach((message, index) => expect(message).toBe(second[index]));
    expect(base.doGenerateCalls[3]!.prompt.slice(0, -2)).toEqual(base.doGenerateCalls[2]!.prompt);
  });

  it("governs streamText steps the same way", async () => {
    const requests: PreparedRequest[] = [];
    let call = 0;
    const base = new MockLanguageModelV4({
      doStream: async (_options: LanguageModelV4CallOptions) => {
        call++;
        const chunks: LanguageModelV4StreamPart[] =
          call > 12
            ? [
                { type: "text-start", id: "t" },
                { type: "text-delta", id: "t", delta: "done" },
                { type: "text-end", id: "t" },
                { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: usage(100) },
              ]
            : [
                readFileCall(call),
                {
                  type: "finish",
                  finishReason: { unified: "tool-calls", raw: "tool_calls" },
                  usage: usage(100),
                },
              ];
        return { stream: simulateReadableStream({ chunks }) };
      },
    });
    const result = streamText({
      model: base,
      tools,
      prompt: "Read twelve files",
      prepareStep: ctxkitPrepareStep({ ...options(requests), contextWindow: 16_000 }),
      stopWhen: stepCountIs(20),
    });
    expect(await result.text).toBe("done");
    expect(requests).toHaveLength(13);
    expect(requests.some((request) => request.checkpoint)).toBe(true);
    const counter = new FakeTokenCounter();
    for (const streamed of base.doStreamCalls)
      expect(counter.countText(JSON.stringify(streamed.prompt))).toBeLessThan(16_000);
  });
  it("keeps the system messages among the step's messages: sent first, and counted", async () => {
    const requests: PreparedRequest[] = [];
    const base = scriptedReader(1, () => 100);
    await generateText({
      model: base,
      tools,
      messages: [
        { role: "system", content: "Answer in French." },
        { role: "user", content: "Read one file" },
      ],
      allowSystemInMessages: true,
      prepareStep: ctxkitPrepareStep({ ...options(requests), contextWindow: 200_000 }),
      stopWhen: stepCountIs(5),
    });
    expect(base.doGenerateCalls).toHaveLength(2);
    for (const call of base.doGenerateCalls)
      expect(call.prompt[0]).toEqual({ role: "system", content: "Answer in French." });
    expect(requests[0]!.system).toContain("Answer in French.");
  });

  it("commits the call's last reply at onEnd, with its usage, without waiting for the next call", async () => {
    const requests: PreparedRequest[] = [];
    const base = scriptedReader(1, () => 321);
    const prepareStep = ctxkitPrepareStep({ ...options(requests), contextWindow: 200_000 });
    await generateText({
      model: base,
      tools,
      prompt: "Read one file",
      prepareStep,
      onEnd: prepareStep.onEnd,
      stopWhen: stepCountIs(5),
    });
    const engine = memoryEngineOf(prepareStep)!;
    const stored = await engine.settings.store.loadMessages("ai-sdk", { strategy: "all" });
    expect(stored.map((message) => message.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(stored.at(-1)).toMatchObject({
      content: [{ type: "text", text: "all files read" }],
      usage: { input: 321, output: 10 },
    });
  });
});
