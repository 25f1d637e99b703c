import { describe, expect, it } from "vitest";
import { importTranscriptFile } from "../formats/transcripts/index.ts";
import { transcriptMessages, transcriptPath } from "../../test/support/transcripts.ts";
import { requestPoints } from "../replay/replay.ts";
import { createExtractiveSummarizer } from "../summarize/index.ts";
import { createExactCounter } from "../tokens/exact-counter.ts";
import { LoopDetector } from "./loop-detector.ts";
import { ContextOverflowError } from "../errors/errors.ts";
import { messageText, toolResultText } from "../model/blocks.ts";
import { toolMessageText } from "./tool-output-text.ts";
import { sequentialIds } from "../model/ids.ts";
import type { Message } from "../model/message.ts";
import { pairToolCalls } from "../model/tool-pairing.ts";
import { FakeSummarizer } from "../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { HistoryBuilder } from "../test/history-builder.ts";
import type { GovernanceEvent } from "./events.ts";
import { createGovernor, type GovernorOptions } from "./governor.ts";
import { MemoryOffloadStore } from "./offload-store.ts";
import { createRecallTool } from "./recall-tool.ts";
import { preset } from "./presets.ts";

const big = (label: string, characters: number) =>
  Array.from(
    { length: Math.ceil(characters / 40) },
    (_, line) => `${label} line ${line} ${"x".repeat(20)}`,
  ).join("\n");

function governor(overrides: Partial<GovernorOptions> = {}) {
  const events: GovernanceEvent[] = [];
  const summarizer = new FakeSummarizer();
  const instance = createGovernor({
    contextWindow: 20_000,
    reservedOutputTokens: 2_000,
    counter: new FakeTokenCounter(),
    summarizer,
    ids: sequentialIds(),
    clock: () => new Date("2026-01-01T00:00:00Z"),
    onEvent: (event) => events.push(event),
    ...overrides,
  });
  return { instance, events, summarizer };
}

describe("Governor", () => {
  it("passes a small history through unchanged and counts each message once", async () => {
    const counter = new FakeTokenCounter();
    const { instance } = governor({ counter });
    const history = new HistoryBuilder().user("hello").reply("hi").build();
    const first = await instance.prepare(history);
    expect(first.messages).toEqual(history);
    expect(first.checkpoint).toBe(false);
    const calls = counter.calls;
    const second = await instance.prepare([
      ...history,
      ...new HistoryBuilder()
        .user("next")
        .build()
        .map((m) => ({ ...m, id: "n", seq: 2, turn: 2 })),
    ]);
    expect(second.messages).toHaveLength(3);
    expect(counter.calls - calls).toBe(1);
  });

  it("truncates older big tool results, keeping the newest step, call id and tool name", async () => {
    const { instance, events } = governor({
      pipeline: preset("default", {
        truncateToolResultsAbove: 500,
        offloadMinPrunableTokens: 0,
        cacheAware: false,
        offloadProtectTokens: 0,
        groundingTarget: 0,
      }),
    });
    const history = new HistoryBuilder()
      .user("inspect the logs")
      .step([{ name: "bash", input: { command: "cat a.log" }, output: big("old", 8_000) }])
      .step([{ name: "bash", input: { command: "cat b.log" }, output: big("new", 8_000) }])
      .build();
    const request = await instance.prepare(history);
    const older = request.messages[2]!.content[0]!;
    const newest = request.messages[4]!.content[0]!;
    expect(older.type === "tool-result" && older.callId).toBe("call_1");
    expect(older.type === "tool-result" && older.toolName).toBe("bash");
    expect(older.type === "tool-result" && toolResultText(older.content)).toMatch(
      /\[… \d+ of \d+ tokens omitted …\]/,
    );
    expect(newest).toEqual(history[4]!.content[0]);
    expect(events.map((event) => event.type)).toContain("tool-output-truncated");
  });

  it("offloads outputs outside the protection window and the recall tool reads them back", async () => {
    const offloadingPolicy = {
      offloadProtectTokens: 3_000,
      offloadMinPrunableTokens: 2_000,
      cacheAware: false,
      compactionTrigger: 0,
      groundingTarget: 0,
    };
    const store = new MemoryOffloadStore();
    const { instance, events } = governor({
      offloadStore: store,
      contextWindow: 100_000,
      pipeline: preset("default", offloadingPolicy),
    });
    const builder = new HistoryBuilder().user("read everything");
    for (let index = 0; index < 6; index++) {
      builder.step([
        { name: "read_file", input: { path: `src/file${index}.ts` }, output: big(`file${index}`, 6_000) },
      ]);
    }
    const history = builder.build();
    const request = await instance.prepare(history);
    const offloaded = events.find((event) => event.type === "tool-output-offloaded");
    expect(offloaded?.type === "tool-output-offloaded" && offloaded.refs.length).toBeGreaterThan(0);
    const first = request.messages[2]!.content[0]!;
    if (first.type !== "tool-result" || first.offloadRef === undefined)
      throw new Error("expected an offloaded result");
    const recall = createRecallTool(store);
    const page = await recall.execute({ ref: first.offloadRef, offset: 0, limit: 100_000 });
    expect(page).toContain(toolMessageText(history[2]!));
    // The newest results stay verbatim.
    expect(request.messages.at(-1)).toBe(history.at(-1));
    expect(toolMessageText(request.messages[2]!)).toContain(`recall_tool_output("${first.offloadRef}"`);

    // An agent without the recall tool (a proxy's client) is told to run the tool again instead.
    const blind = governor({
      contextWindow: 100_000,
      recall: false,
      pipeline: preset("default", offloadingPolicy),
    });
    const notice = toolMessageText((await blind.instance.prepare(history)).messages[2]!);
    // The exact call that reads it again, in the agent's own tools.
    expect(notice).toMatch(/output offloaded: .*run \w+\(.+\) again if you need it\]$/s);
    expect(notice).not.toContain("recall_tool_output");
  });

  it("compacts into a summary standing where the replaced messages stood, after the run's instruction", async () => {
    const { instance, events, summarizer } = governor({
      pipeline: preset("default", {
        cacheAware: false,
        offloadMinPrunableTokens: 0,
        truncateToolResultsAbove: 0,
      }),
    });
    const builder = new HistoryBuilder().user("one long task");
    for (let index = 0; index < 40; index++)
      builder.step([{ name: "grep", input: { pattern: `p${index}` }, output: big(`g${index}`, 2_000) }]);
    const history = builder.build();
    const request = await instance.prepare(history);
    expect(events.map((event) => event.type)).toContain("compaction-end");
    expect(request.messages[0]).toBe(history[0]); // the instruction stays first and verbatim
    expect(request.messages[1]!.kind).toBe("summary");
    expect(request.messages.at(-1)).toBe(history.at(-1));
    expect(request.tokens.total).toBeLessThan(0.8 * request.tokens.usable);
    expect(summarizer.requests).toHaveLength(1);
  });

  it("tells listeners a compaction started while its summarizer runs, and lists it once with the request", async () => {
    const heard: GovernanceEvent[] = [];
    let heardAtSummary: string[] = [];
    const summarizer = new FakeSummarizer({
      respond: () => {
        heardAtSummary = heard.map((event) => event.type);
        return "The task so far: grepped forty patterns.";
      },
    });
    const { instance } = governor({
      summarizer,
      onEvent: (event) => heard.push(event),
      pipeline: preset("default", {
        cacheAware: false,
        offloadMinPrunableTokens: 0,
        truncateToolResultsAbove: 0,
      }),
    });
    const builder = new HistoryBuilder().user("one long task");
    for (let index = 0; index < 40; index++)
      builder.step([{ name: "grep", input: { pattern: `p${index}` }, output: big(`g${index}`, 2_000) }]);
    const request = await instance.prepare(builder.build());
    expect(heardAtSummary).toEqual(["compaction-start"]);
    const types = request.events.map((event) => event.type);
    expect(types.filter((type) => type === "compaction-start")).toHaveLength(1);
    expect(heard.map((event) => event.type)).toEqual(types);
  });

  it("updates the previous summary instead of rebuilding it", async () => {
    const { instance, summarizer } = governor({
      // Compaction at the trigger alone (settled-history compaction adds summaries of its own).
      pipeline: preset("default", {
        cacheAware: false,
        offloadMinPrunableTokens: 0,
        truncateToolResultsAbove: 0,
        compactSettledHistory: false,
      }),
    });
    const builder = new HistoryBuilder().user("task");
    for (let index = 0; index < 40; index++)
      builder.step([{ name: "grep", output: big(`a${index}`, 2_000) }]);
    await instance.prepare(builder.build());
    for (let index = 0; index < 40; index++)
      builder.step([{ name: "grep", output: big(`b${index}`, 2_000) }]);
    const request = await instance.prepare(builder.build());
    expect(summarizer.requests).toHaveLength(2);
    expect(summarizer.requests[1]!.previousSummary).toBeTruthy();
    expect(request.messages.filter((message) => message.kind === "summary")).toHaveLength(1);
  });

  it("summarises settled history long before the trigger, when the cache arithmetic says it pays", async () => {
    const { instance, events } = governor({
      contextWindow: 128_000,
      reservedOutputTokens: 8_000,
      pipeline: preset("default", { compactSettledHistory: true }),
    });
    const builder = new HistoryBuilder().user("find every caller of parse()");
    let largest = 0;
    for (let index = 0; index < 150; index++) {
      builder.step([
        { name: "grep", input: { pattern: `caller${index}` }, output: big(`hit${index}`, 3_000) },
      ]);
      const request = await instance.prepare(builder.build());
      largest = Math.max(largest, request.tokens.total);
    }
    const compactions = events.filter((event) => event.type === "compaction-start");
    expect(compactions.length).toBeGreaterThan(1);
    expect(
      compactions.every((event) => event.type === "compaction-start" && /settled/.test(event.reason)),
    ).toBe(true);
    // 150 steps of ~750 tokens would be ~113k tokens; the trigger is 0.8 × 120k.
    expect(largest).toBeLessThan(0.4 * 120_000);
    expect(instance.view.filter((message) => message.kind === "summary").length).toBeGreaterThan(0);
    expect(messageText(instance.view[0]!)).toBe("find every caller of parse()");
  });

  it("refuses a request that cannot fit, with the numbers", async () => {
    const { instance } = governor({ pipeline: preset("default", { toolResultCapShare: 0 }) });
    const history = new HistoryBuilder().user(big("huge instruction", 100_000)).build();
    await expect(instance.prepare(history)).rejects.toBeInstanceOf(ContextOverflowError);
    await expect(instance.prepare(history)).rejects.toThrow(/window is 20000/);
  });

  it("caps a single giant tool result even in the newest step so the request fits", async () => {
    const { instance, events } = governor();
    const history = new HistoryBuilder()
      .user("dump it")
      .step([{ name: "bash", input: { command: "cat huge" }, output: big("huge", 200_000) }])
      .build();
    const request = await instance.prepare(history);
    expect(request.tokens.total + request.tokens.reservedOutput).toBeLessThanOrEqual(20_000);
    expect(events.map((event) => event.type)).toContain("tool-output-capped");
  });

  it("recovers from provider overflow errors: trim first, then clear", async () => {
    const { instance, events } = governor({ contextWindow: 1_000_000 });
    const builder = new HistoryBuilder();
    for (let turn = 0; turn < 8; turn++)
      builder
        .user(`turn ${turn}`)
        .step([{ name: "bash", output: big("o", 30_000) }])
        .reply("ok");
    const history = builder.build();
    await instance.prepare(history);
    const openAiError = Object.assign(new Error("This model's maximum context length is 128000 tokens"), {
      status: 400,
    });
    const first = await instance.recover(openAiError);
    expect(first).toMatchObject({ retry: true, cleared: false });
    // The outcome carries its event: callers need not fish it out of onEvent.
    expect(first.event).toMatchObject({ type: "emergency-recovery", stage: "trimmed" });
    expect(first.event).toBe(events.find((event) => event.type === "emergency-recovery"));
    expect(first.event!.tokensAfter).toBeLessThan(first.event!.tokensBefore);
    const trimmed = await instance.prepare(history);
    expect(trimmed.messages.filter((message) => message.role === "user")).toHaveLength(5);
    expect(trimmed.messages.every((message) => messageText(message).length <= 10_100)).toBe(true);
    const second = await instance.recover({ status: 413, message: "Request Entity Too Large" });
    expect(second).toMatchObject({ retry: false, cleared: true, event: { stage: "cleared" } });
    expect(instance.view.map((message: Message) => messageText(message))).toEqual(["turn 7"]);
    expect(events.filter((event) => event.type === "emergency-recovery")).toHaveLength(2);
    expect(await instance.recover(new Error("rate limited"))).toEqual({ retry: false, cleared: false });
    // Both stages spent: a third overflow in a row changes nothing (a caller that retries on an event stops).
    expect(await instance.recover(openAiError)).toEqual({ retry: false, cleared: false });
    expect(events.filter((event) => event.type === "emergency-recovery")).toHaveLength(2);
  });

  it("keeps the leading system messages through both recovery stages and the turns after them", async () => {
    const { instance } = governor({ contextWindow: 1_000_000 });
    const builder = new HistoryBuilder().system("You are careful. Never delete the repository.");
    for (let turn = 0; turn < 8; turn++) builder.user(`turn ${turn}`).reply("ok");
    const history = builder.user("turn 8").build();
    await instance.prepare(history);
    const overflow = Object.assign(new Error("prompt is too long: 210000 tokens > 200000 maximum"), {
      status: 400,
    });
    expect(await instance.recover(overflow)).toMatchObject({ retry: true, cleared: false });
    const trimmed = await instance.prepare(history);
    expect(trimmed.messages[0]).toMatchObject({ role: "system" });
    expect(trimmed.messages.filter((message) => message.role === "user")).toHaveLength(5);
    expect(await instance.recover(overflow)).toMatchObject({ retry: false, cleared: true });
    expect(instance.view.map((message: Message) => [message.role, messageText(message)])).toEqual([
      ["system", "You are careful. Never delete the repository."],
      ["user", "turn 8"],
    ]);
  });

  it("adds a budget-exit notice when the run still presses against the window", async () => {
    const { instance, events } = governor({
      pipeline: preset("default", {
        compactionTrigger: 0,
        budgetExitShare: 0.5,
        truncateToolResultsAbove: 0,
        offloadMinPrunableTokens: 0,
      }),
    });
    const builder = new HistoryBuilder().user("go");
    for (let index = 0; index < 12; index++) builder.step([{ name: "grep", output: big("r", 4_500) }]);
    const request = await instance.prepare(builder.build());
    expect(messageText(request.messages.at(-1)!)).toMatch(/Context budget notice/);
    expect(events.map((event) => event.type)).toContain("budget-exit-notice");
    expect(instance.view.at(-1)!.role).toBe("tool");
  });

  it("adds no budget-exit notice after a reply the request resumes (a paused turn): the reply stays last", async () => {
    const { instance, events } = governor({
      pipeline: preset("default", {
        compactionTrigger: 0,
        budgetExitShare: 0.5,
        truncateToolResultsAbove: 0,
        offloadMinPrunableTokens: 0,
      }),
    });
    const builder = new HistoryBuilder().user("go");
    for (let index = 0; index < 12; index++) builder.step([{ name: "grep", output: big("r", 4_500) }]);
    const request = await instance.prepare(builder.reply("Searching the web…").build());
    expect(request.messages.at(-1)).toMatchObject({ role: "assistant" });
    expect(events.map((event) => event.type)).not.toContain("budget-exit-notice");
  });

  it("does not re-run the pipeline on every request when a pile of tool output holds nothing to offload", async () => {
    let runs = 0;
    const counting = { name: "counting", process: (messages: readonly Message[]) => (runs++, messages) };
    // Settled-history compaction would summarise the pile: this test is about offload batches alone.
    const base = preset("default", {
      offloadProtectTokens: 1_000,
      offloadMinPrunableTokens: 1_000,
      cacheAware: false,
      compactSettledHistory: false,
    });
    const { instance } = governor({
      contextWindow: 1_000_000,
      pipeline: { ...base, processors: [...base.processors, counting] },
    });
    // Outputs of ~300 tokens each: they count as tool traffic but are too small to offload.
    const builder = new HistoryBuilder().user("list everything");
    let requests = 0;
    for (let index = 0; index < 200; index++) {
      builder.step([{ name: "ls", input: { path: `dir${index}` }, output: big(`entry${index}`, 1_200) }]);
      const request = await instance.prepare(builder.build());
      expect(request.checkpoint).toBe(false);
      requests++;
    }
    expect(runs).toBeGreaterThan(0);
    expect(runs).toBeLessThan(requests / 3);
  });

  it("reports a loop of identical tool calls", async () => {
    const { instance } = governor();
    const builder = new HistoryBuilder().user("go");
    for (let index = 0; index < 5; index++)
      builder.step([{ name: "read_file", input: { path: "a.ts" }, output: "same" }]);
    const request = await instance.prepare(builder.build());
    expect(request.loop?.kind).toBe("repeated-call");
    expect(request.events.map((event) => event.type)).toContain("loop-detected");
  });

  it("takes polling (the same call, new output each time) for progress, not a loop", async () => {
    const { instance } = governor();
    const builder = new HistoryBuilder().user("build it");
    for (let index = 0; index < 8; index++) {
      builder.step([
        { name: "write_stdin", input: { chars: "", session_id: 9 }, output: `building… ${index * 10}%` },
      ]);
      expect((await instance.prepare(builder.build())).loop).toBeUndefined();
    }
    // Once the output stops changing, the same polls are a loop again.
    for (let index = 0; index < 5; index++)
      builder.step([{ name: "write_stdin", input: { chars: "", session_id: 9 }, output: "stuck at 70%" }]);
    expect((await instance.prepare(builder.build())).loop?.kind).toBe("repeated-call");
  });

  it("reports no loop in the real transcripts' polling (a Codex build watched with write_stdin)", async () => {
    const [conversation] = await importTranscriptFile(
      transcriptPath(
        "codemie-code/codex/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
      ),
    );
    const detector = new LoopDetector();
    const detections = conversation!.messages.flatMap((message) => detector.observe(message) ?? []);
    expect(detections).toEqual([]);
  });
});

describe("Governor: a retry", () => {
  it("sends exactly what the first try sent, at every request of a long real session in a small window", async () => {
    const messages = await transcriptMessages("claude-code__entireio-cli/b8/e9234b1b70/0/full.jsonl");
    const counter = await createExactCounter("o200k_base");
    const governor = createGovernor({
      contextWindow: 64_000,
      counter,
      summarizer: createExtractiveSummarizer({ counter }),
    });
    let checkpoints = 0;
    for (const end of requestPoints(messages)) {
      const first = await governor.prepare(messages.slice(0, end));
      if (first.checkpoint) checkpoints++;
      const again = await governor.prepare(messages.slice(0, end));
      expect(again.checkpoint, `request ending at ${end}`).toBe(false);
      expect(again.messages, `request ending at ${end}`).toEqual(first.messages);
    }
    // The session is governed along the way: the retries had checkpoints to repeat or to take early.
    expect(checkpoints).toBeGreaterThan(3);
  });
});

describe("isContextOverflowError", () => {
  it("recognises every provider's overflow shape and nothing else", async () => {
    const { isContextOverflowError } = await import("../errors/overflow-recognition.ts");
    const overflows = [
      {
        status: 400,
        error: {
          code: "context_length_exceeded",
          message: "This model's maximum context length is 128000 tokens.",
        },
      },
      {
        statusCode: 400,
        responseBody:
          '{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}',
      },
      new Error("The input token count (1048577) exceeds the maximum number of tokens allowed (1048576)."),
      new Error("the request exceeds the available context size, try increasing it"),
      new Error("exceeded max context length by 1200 tokens"),
      { status: 413, message: "Request Entity Too Large" },
    ];
    for (const error of overflows) expect(isContextOverflowError(error)).toBe(true);
    for (const error of [
      new Error("rate limit exceeded"),
      { status: 401, message: "invalid api key" },
      "boom",
    ]) {
      expect(isContextOverflowError(error)).toBe(false);
    }
  });
});

describe("Governor: what is sent fits the window by the figure governance decides on", () => {
  /** A run whose second request brings five big outputs at once: the view before the checkpoint is 5× the window. */
  async function fiveBigReads(ratio: number) {
    const { instance, events } = governor();
    const builder = new HistoryBuilder().user("read the five logs");
    const first = await instance.prepare(builder.build());
    instance.observeUsage(first.tokens, ratio * first.tokens.total);
    builder.step(
      ["a", "b", "c", "d", "e"].map((name) => ({
        name: "read_file",
        input: { path: `${name}.log` },
        output: big(name, 36_000),
      })),
    );
    return { request: await instance.prepare(builder.build()), events };
  }

  it("anchors the view a checkpoint produced, not the one before it (the provider counts 2×)", async () => {
    // Before: the correction measured on the pre-checkpoint view was kept: "needs 39,045 tokens", refused.
    const { request } = await fiveBigReads(2);
    expect(request.checkpoint).toBe(true);
    expect(request.tokens.anchoredTotal).toBe(2 * request.tokens.total);
    expect(request.tokens.anchoredTotal! + request.tokens.reservedOutput).toBeLessThanOrEqual(20_000);
  });

  it("anchors the view a checkpoint produced when the provider counts less (relaxed by at most 10%)", async () => {
    // Before: 20,999 counted tokens were sent, 18,900 by ctxkit's own adjusted count: 900 over the window.
    const { request } = await fiveBigReads(0.5);
    expect(request.tokens.anchoredTotal).toBe(Math.ceil(0.9 * request.tokens.total));
    expect(request.tokens.anchoredTotal! + request.tokens.reservedOutput).toBeLessThanOrEqual(20_000);
  });

  it("counts what orphan repair adds before deciding that the request fits", async () => {
    const builder = new HistoryBuilder()
      .user("deploy it")
      .step([{ name: "bash", input: { command: "make" }, output: big("build", 8_000) }])
      // An interrupted step: its call never got a result, so one is synthesised when the view is sent.
      .message({ role: "assistant", content: [{ type: "tool-call", id: "lost", name: "bash", input: {} }] })
      .user("did it deploy?");
    const history = builder.build();
    const policy = {
      compactionTrigger: 1,
      compactSettledHistory: false,
      truncateToolResultsAbove: 0,
      offloadMinPrunableTokens: 0,
      elideToolInputsAbove: 0,
      budgetExitShare: 0,
    };
    const probe = governor({ pipeline: preset("default", policy) }).instance;
    const viewTokens = history.reduce((sum, message) => sum + probe.tokensOf(message), 0);
    // The view alone fills the usable window exactly; the synthesised result would push it over.
    // Before: nothing was done (the view fitted) and the repaired request went over the window.
    const { instance, events } = governor({ pipeline: preset("default", policy) });
    const request = await instance.prepare(history, { fixedTokens: 18_000 - viewTokens });
    expect(request.tokens.total + request.tokens.reservedOutput).toBeLessThanOrEqual(20_000);
    expect(events.map((event) => event.type)).toContain("overflow-prevented");
    expect(pairToolCalls(request.messages).pairs.every((pair) => pair.result !== undefined)).toBe(true);
  });

  it("drops older history, summaries included, rather than refuse a request whose protected part fits", async () => {
    const { instance, events } = governor();
    const history = new HistoryBuilder()
      .user(`first task ${big("spec", 2_000)}`)
      .reply("done")
      .user("second task")
      .build();
    const instructionTokens = instance.tokensOf(history.at(-1)!);
    // Room for the instruction, not for a summary of the first turn next to it.
    const request = await instance.prepare(history, { fixedTokens: 18_000 - instructionTokens - 5 });
    expect(request.messages).toEqual([history.at(-1)]);
    const prevented = events.find((event) => event.type === "overflow-prevented");
    expect(prevented?.messageIds.length).toBeGreaterThan(0);
  });
});
