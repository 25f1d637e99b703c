// Processors as factories with their own validated options and declared triggers, pipelines users assemble, and
// the pipelines presets assemble.
import { describe, expect, it } from "vitest";
import { ValidationError } from "../errors/errors.ts";
import { sequentialIds } from "../model/ids.ts";
import { FakeSummarizer } from "../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { HistoryBuilder } from "../test/history-builder.ts";
import type { GovernanceEvent } from "./events.ts";
import { createGovernor, type GovernorOptions } from "./governor.ts";
import { resolveGovernorSettings } from "./governor-settings.ts";
import { createPipeline, withSettings } from "./pipeline.ts";
import { preset } from "./presets.ts";
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
});

describe("governor settings", () => {
  it("fill in their defaults, the same values the presets always had", () => {
    expect(resolveGovernorSettings()).toEqual({
      protectTokens: 1_000,
      batchTokens: 3_000,
      groundingTarget: 0.9995,
      reuseRatesWeight: resolveGovernorSettings().reuseRatesWeight,
      tailShare: 0.25,
      neededShare: 0.4,
      truncationHeadShare: 0.2,
      preflight: true,
      budgetExitShare: 0.9,
      loopRepeatThreshold: 5,
      loopCycleRepeats: 5,
      cacheAware: true,
      pricing: "anthropic",
      cacheTtl: "5m",
    });
    expect(preset("default").settings).toEqual(resolveGovernorSettings());
  });

  it("are validated with a typed error naming each bad field, wherever a pipeline enters", () => {
    const bad = thrown(() => resolveGovernorSettings({ budgetExitShare: 1.5, pricing: "azure" as "openai" }));
    expect(bad.code).toBe("invalid_input");
    expect(bad.message).toMatch(/^invalid governor settings: /);
    expect(bad.issues.map((issue) => issue.path).sort()).toEqual(["budgetExitShare", "pricing"]);
    expect(
      thrown(() => createPipeline({ processors: [], settings: { tailShare: -1 } })).issues[0]!.path,
    ).toBe("tailShare");
    // A hand-made pipeline is checked by the governor too.
    const handMade = { processors: [], settings: { protectTokens: -5 } } as never;
    expect(thrown(() => governor({ pipeline: handMade })).issues[0]!.path).toBe("protectTokens");
    expect(thrown(() => withSettings(preset("default"), { cacheTtl: "2h" as "1h" })).issues[0]!.path).toBe(
      "cacheTtl",
    );
  });

  it("hold no processor's options: those belong to the processors' factories", () => {
    // Before, the governor read `elideToolInputsAbove` (and the processors 28 policy fields) from its settings.
    for (const field of [
      "elideToolInputsAbove",
      "maxTurns",
      "truncateToolResultsAbove",
      "compactionTrigger",
    ]) {
      const error = thrown(() => createPipeline({ processors: [], settings: { [field]: 1 } }));
      expect(error.issues[0]!.message).toMatch(new RegExp(field));
    }
    expect(createElideOlderToolInputs({ aboveTokens: 100 }).triggers).toContainEqual({
      kind: "tool-input",
      above: 100,
    });
  });
});

describe("presets", () => {
  const names = (name: string) => preset(name).processors.map((processor) => processor.name);

  it("are pipelines: processors and governor settings, ready for a governor", async () => {
    const pipeline = preset("aggressive");
    expect(Object.keys(pipeline).sort()).toEqual(["processors", "settings"]);
    expect(pipeline.processors.every((processor) => typeof processor.process === "function")).toBe(true);
    const { instance } = governor({ pipeline });
    expect(instance.pipeline.processors.map((processor) => processor.name)).toEqual(names("aggressive"));
    expect(instance.settings.groundingTarget).toBe(0.9);
    const request = await instance.prepare(new HistoryBuilder().user("hi").build());
    expect(request.messages).toHaveLength(1);
  });

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
    expect(preset("off").settings.preflight).toBe(false);
  });

  it("configure each processor from the preset's settings, overrides included", () => {
    const aggressive = preset("aggressive", { compactAboveMessages: 200 });
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
    expect(aggressive.settings).toMatchObject({
      protectTokens: 0,
      batchTokens: 2_000,
      groundingTarget: 0.9,
      tailShare: 0.15,
      neededShare: 0,
    });
    expect(names("default")).not.toContain("compact-settled-history");
    expect(
      preset("default", { compactSettledHistory: true }).processors.map((processor) => processor.name),
    ).toContain("compact-settled-history");
    expect(() => preset("tiny")).toThrow(/unknown governance preset "tiny"/);
    expect(thrown(() => preset("default", { maxTurns: -1 })).issues[0]!.path).toBe("maxTurns");
  });
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
      settings: { protectTokens: 0, groundingTarget: 0 },
    }),
  });
  await instance.prepare(history);
  expect(events.map((event) => event.type)).toContain("tool-inputs-elided");
});
