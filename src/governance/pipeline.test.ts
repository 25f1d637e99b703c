// Processors as factories with their own validated options and declared triggers, pipelines users assemble, and
// the pipelines presets assemble.
import { describe, expect, it } from "vitest";
import { ValidationError } from "../errors/errors.ts";
import { importTranscriptFile } from "../formats/transcripts/index.ts";
import { sequentialIds } from "../model/ids.ts";
import type { Message } from "../model/message.ts";
import { replayableMessages, requestPoints } from "../replay/replay.ts";
import { createExtractiveSummarizer } from "../summarize/index.ts";
import { FakeSummarizer } from "../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { HistoryBuilder } from "../test/history-builder.ts";
import { transcriptPath } from "../../test/support/transcripts.ts";
import type { GovernanceEvent } from "./events.ts";
import { createGovernor, type GovernorOptions } from "./governor.ts";
import { MemoryOffloadStore } from "./offload-store.ts";
import { createPipeline } from "./pipeline.ts";
import { pipelineFromPolicy } from "./policy-pipeline.ts";
import type { GovernancePolicyInput } from "./policy.ts";
import { preset, presetPipeline } from "./presets.ts";
import type { Processor } from "./processor.ts";
import {
  createCapToolResults,
  createCompactHistory,
  createCompressSmallHistory,
  createElideOlderToolInputs,
  createOffloadToolOutputs,
  createStripOlderReasoning,
  createTrimTurns,
  createTruncateToolResults,
  defaultProcessors,
} from "./processors/index.ts";

const big = (label: string, characters: number) =>
  Array.from(
    { length: Math.ceil(characters / 40) },
    (_, line) => `${label} line ${line} ${"x".repeat(20)}`,
  ).join("\n");

function thrown(make: () => unknown): ValidationError {
  try {
    make();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error("expected a ValidationError");
}

describe("processor factories", () => {
  it("reject bad options with a typed error naming the processor and the option", () => {
    const trim = thrown(() => createTrimTurns({ maxTurns: 0 }));
    expect(trim.code).toBe("invalid_input");
    expect(trim.message).toMatch(/^invalid trim-turns options: maxTurns: /);
    expect(trim.issues.map((issue) => issue.path)).toEqual(["maxTurns"]);

    expect(thrown(() => createCompactHistory({ trigger: 1.5 })).message).toMatch(
      /compact-history options: trigger/,
    );
    expect(thrown(() => createCapToolResults({ capShare: 0 })).message).toMatch(
      /cap-tool-results options: capShare/,
    );
    expect(
      thrown(() => createOffloadToolOutputs({ minPrunableTokens: 3_000, previewLines: 2.5 })).message,
    ).toMatch(/offload-tool-outputs options: previewLines/);
    expect(thrown(() => createTruncateToolResults({ aboveTokens: -1 })).message).toMatch(/aboveTokens/);
    // A misspelt option is an error, not silently ignored.
    expect(thrown(() => createStripOlderReasoning({ enabled: true } as never)).issues[0]!.message).toMatch(
      /enabled/,
    );
    expect(thrown(() => createTrimTurns({ maxTurns: 3, maxturns: 4 } as never)).message).toMatch(
      /trim-turns options/,
    );
  });

  it("declare when they run", () => {
    expect(createTrimTurns({ maxTurns: 30 }).triggers).toEqual([{ kind: "turn-count", above: 30 }]);
    expect(createCapToolResults({ capShare: 0.5 }).triggers).toEqual([
      { kind: "each-message" },
      { kind: "checkpoint" },
    ]);
    expect(createCompactHistory({ trigger: 0.7, aboveMessages: 40 }).triggers).toEqual([
      { kind: "payload-share", share: 0.7 },
      { kind: "message-count", above: 40 },
      { kind: "overflow" },
      { kind: "user-request" },
    ]);
    expect(createOffloadToolOutputs({ minPrunableTokens: 2_000 }).triggers).toContainEqual({
      kind: "tool-output",
      tokens: 2_000,
      windowShare: 0.1,
    });
  });
});

function governor(overrides: Partial<GovernorOptions>) {
  const events: GovernanceEvent[] = [];
  const instance = createGovernor({
    contextWindow: 20_000,
    reservedOutputTokens: 2_000,
    counter: new FakeTokenCounter(),
    summarizer: new FakeSummarizer(),
    ids: sequentialIds(),
    clock: () => new Date("2026-01-01T00:00:00Z"),
    onEvent: (event) => events.push(event),
    ...overrides,
  });
  return { instance, events };
}

/** A processor of one's own that records the view sizes it ran on. */
function recording(name: string, triggers?: Processor["triggers"]): Processor & { runs: number[] } {
  const runs: number[] = [];
  return {
    name,
    runs,
    ...(triggers !== undefined && { triggers }),
    process: (messages) => (runs.push(messages.length), messages),
  };
}

describe("a pipeline assembled by the user", () => {
  it("runs through the governor: its processors' triggers, and nothing else, take the checkpoints", async () => {
    const atCheckpoints = recording("at-checkpoints");
    const byCount = recording("by-count", [{ kind: "message-count", above: 6 }]);
    const { instance, events } = governor({
      pipeline: createPipeline({ processors: [createTrimTurns({ maxTurns: 3 }), byCount, atCheckpoints] }),
    });
    const builder = new HistoryBuilder();
    const checkpoints: boolean[] = [];
    for (let turn = 0; turn < 5; turn++) {
      builder.user(`question ${turn}`).reply(`answer ${turn}`);
      checkpoints.push((await instance.prepare(builder.build())).checkpoint);
    }
    // Turns 1–3: under both triggers, no checkpoint (3 turns, 6 messages). Turn 4: both pass, trim-turns drops
    // the oldest half of the complete turns into a summary.
    expect(checkpoints).toEqual([false, false, false, true, false]);
    expect(events.filter((event) => event.type === "turns-trimmed")).toHaveLength(1);
    expect(instance.view[0]!.kind).toBe("summary");
    // Both processors ran in the checkpoint fold, after trim-turns, on every checkpoint: the 4th request's (trimmed
    // to a summary and two turns: 5 messages) and the 5th's, whose 7 messages pass by-count's trigger (a checkpoint
    // that changed nothing, so none is reported).
    expect(byCount.runs).toEqual([5, 7]);
    expect(atCheckpoints.runs).toEqual([5, 7]);
    // The settings default; the policy's processors are not added behind the user's back.
    expect(instance.pipeline.processors.map((processor) => processor.name)).toEqual([
      "trim-turns",
      "by-count",
      "at-checkpoints",
    ]);
  });

  it("runs an each-message processor on every new message, and none on a big tool result when it has no cap", async () => {
    const arrivals = recording("arrivals", [{ kind: "each-message" }]);
    const withCap = governor({
      pipeline: createPipeline({ processors: [arrivals, createCapToolResults({ capShare: 0.1 })] }),
    });
    const history = new HistoryBuilder()
      .user("read it")
      .step([{ name: "read_file", input: { path: "a.ts" }, output: big("a", 40_000) }])
      .build();
    const capped = await withCap.instance.prepare(history);
    expect(arrivals.runs).toEqual(history.map(() => 1));
    expect(withCap.events.map((event) => event.type)).toContain("tool-output-capped");
    expect(capped.messages.at(-1)).not.toBe(history.at(-1));

    // Without a cap in the pipeline the same result arrives as it is (the policy's cap is not implied).
    const withoutCap = governor({
      contextWindow: 1_000_000,
      pipeline: createPipeline({ processors: [recording("nothing")] }),
    });
    const sent = await withoutCap.instance.prepare(history);
    expect(sent.messages.at(-1)).toBe(history.at(-1));
  });

  it("compacts a request that would overflow with the compaction it holds, and refuses it without one", async () => {
    const history = new HistoryBuilder();
    for (let turn = 0; turn < 24; turn++)
      history.user(`question ${turn} ${big("q", 2_000)}`).reply(`answer ${turn} ${big("r", 4_000)}`);
    history.user("now");
    const compacting = governor({
      pipeline: createPipeline({
        processors: [
          createCompactHistory({ trigger: 0.99 }),
          createCompressSmallHistory({ belowTurns: 5, trigger: 0.99 }),
        ],
      }),
    });
    const request = await compacting.instance.prepare(history.build());
    expect(request.checkpoint).toBe(true);
    expect(compacting.events.map((event) => event.type)).toContain("compaction-end");

    const none = governor({ pipeline: createPipeline({ processors: [] }) });
    await expect(none.instance.prepare(history.build())).rejects.toThrow(/could not shrink/);
  });

  it("is taken instead of a policy, not beside one", () => {
    expect(() =>
      createGovernor({
        contextWindow: 20_000,
        counter: new FakeTokenCounter(),
        summarizer: new FakeSummarizer(),
        pipeline: presetPipeline("default"),
        policy: { maxTurns: 3 },
      }),
    ).toThrow(ValidationError);
  });
});

describe("presets", () => {
  const names = (name: string) => presetPipeline(name).processors.map((processor) => processor.name);

  it("assemble the pipelines they claim", () => {
    expect(names("default")).toEqual([
      "cap-tool-results",
      "strip-older-reasoning",
      "replace-older-binaries",
      "use-compact-summaries",
      "offload-tool-outputs",
      "elide-older-tool-inputs",
      "truncate-tool-results",
      "compact-history",
      "compress-small-history",
    ]);
    expect(names("aggressive")).toEqual([
      "cap-tool-results",
      "strip-older-reasoning",
      "replace-older-binaries",
      "use-compact-summaries",
      "offload-tool-outputs",
      "elide-older-tool-inputs",
      "truncate-tool-results",
      "trim-turns",
      "compact-history",
      "compress-small-history",
    ]);
    expect(names("minimal")).toEqual(["cap-tool-results", "compact-history", "compress-small-history"]);
    expect(names("off")).toEqual([]);
    expect(presetPipeline("off").settings.preflight).toBe(false);
  });

  it("configure each processor from the preset's settings, overrides included", () => {
    const aggressive = presetPipeline("aggressive", { compactAboveMessages: 200 });
    const byName = new Map(aggressive.processors.map((processor) => [processor.name, processor]));
    expect(byName.get("trim-turns")!.triggers).toEqual([{ kind: "turn-count", above: 30 }]);
    expect(byName.get("compact-history")!.triggers).toEqual([
      { kind: "payload-share", share: 0.7 },
      { kind: "message-count", above: 200 },
      { kind: "overflow" },
      { kind: "user-request" },
    ]);
    expect(byName.get("offload-tool-outputs")!.triggers).toContainEqual({
      kind: "tool-output",
      tokens: 2_000,
      windowShare: 0.1,
    });
    expect(byName.get("truncate-tool-results")!.triggers).toContainEqual({
      kind: "tool-output",
      tokens: 1_500,
    });
    expect(aggressive.settings).toEqual(preset("aggressive", { compactAboveMessages: 200 }));
    expect(names("default")).not.toContain("compact-settled-history");
    expect(
      pipelineFromPolicy({ compactSettledHistory: true }).processors.map((processor) => processor.name),
    ).toContain("compact-settled-history");
    expect(() => presetPipeline("tiny")).toThrow(/unknown governance preset "tiny"/);
  });
});

async function session(): Promise<Message[]> {
  const [conversation] = await importTranscriptFile(
    transcriptPath(
      "claude-code__daaain-claude-code-log/-Users-dain-workspace-JSSoundRecorder/7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl",
    ),
  );
  return replayableMessages(conversation!.messages);
}

describe("a preset's pipeline and the policy-reading processors", () => {
  const policies: Record<string, GovernancePolicyInput> = {
    default: preset("default"),
    aggressive: preset("aggressive"),
    "settled history": preset("default", { compactSettledHistory: true }),
  };
  for (const [label, policy] of Object.entries(policies)) {
    it(`govern a real session identically (${label})`, async () => {
      const messages = await session();
      const counter = new FakeTokenCounter();
      let now = Date.parse("2026-01-01T00:00:00Z");
      const common = {
        contextWindow: 24_000,
        counter,
        summarizer: createExtractiveSummarizer({ counter }),
        clock: () => new Date(now),
        ids: (prefix: string) => `${prefix}-${now}`,
      };
      const factories = createGovernor({
        ...common,
        offloadStore: new MemoryOffloadStore(),
        pipeline: pipelineFromPolicy(policy),
      });
      const singletons = createGovernor({
        ...common,
        offloadStore: new MemoryOffloadStore(),
        policy,
        processors: defaultProcessors(),
      });
      let checkpoints = 0;
      for (const point of requestPoints(messages)) {
        now += 20_000;
        const history = messages.slice(0, point);
        const expected = await singletons.prepare(history, { fixedTokens: 1_000 });
        const actual = await factories.prepare(history, { fixedTokens: 1_000 });
        expect(JSON.stringify(actual.messages)).toBe(JSON.stringify(expected.messages));
        expect(actual.checkpoint).toBe(expected.checkpoint);
        expect(actual.events).toEqual(expected.events);
        if (expected.checkpoint) checkpoints++;
        const reported = Math.round(expected.tokens.total * 1.3);
        singletons.observeUsage(expected.tokens, reported);
        factories.observeUsage(actual.tokens, reported);
      }
      expect(checkpoints).toBeGreaterThan(3);
      expect(factories.snapshot()).toEqual(singletons.snapshot());
    });
  }
});

it("elide-older-tool-inputs shortens arguments above its own limit", async () => {
  const history = new HistoryBuilder()
    .user("write it")
    .step([{ name: "write_file", input: { path: "a.ts", content: big("c", 8_000) }, output: "ok" }])
    .step([{ name: "read_file", input: { path: "b.ts" }, output: "b" }])
    .build();
  const { instance, events } = governor({
    pipeline: createPipeline({
      processors: [
        createElideOlderToolInputs({ aboveTokens: 100 }),
        recording("by-count", [{ kind: "message-count", above: 2 }]),
      ],
      settings: { offloadProtectTokens: 0, groundingTarget: 0 },
    }),
  });
  await instance.prepare(history);
  expect(events.map((event) => event.type)).toContain("tool-inputs-elided");
});
