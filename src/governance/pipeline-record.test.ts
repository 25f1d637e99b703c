import { describe, expect, it } from "vitest";
import { createPipeline } from "./pipeline.ts";
import { describePipeline, pipelineFromRecord } from "./pipeline-record.ts";
import { preset, presetNames } from "./presets.ts";

describe("a pipeline's record", () => {
  it("rebuilds every preset with the same processors, options, triggers and settings (as JSON)", () => {
    for (const name of presetNames) {
      const pipeline = preset(name, { compactSettledHistory: true, maxTurns: 12 });
      const record = JSON.parse(JSON.stringify(describePipeline(pipeline))) as ReturnType<
        typeof describePipeline
      >;
      const { pipeline: rebuilt, unknown } = pipelineFromRecord(record);
      expect(unknown).toEqual([]);
      expect(rebuilt.settings).toEqual(pipeline.settings);
      const shape = (p: typeof pipeline) =>
        p.processors.map(({ name, triggers, options }) => ({ name, triggers, options }));
      expect(shape(rebuilt)).toEqual(shape(pipeline));
    }
  });

  it("names the processors of one's own it cannot rebuild, and keeps the rest", () => {
    const mine = { name: "mine", process: (messages: readonly never[]) => messages };
    const pipeline = createPipeline({ processors: [mine, ...preset("minimal").processors] });
    const { pipeline: rebuilt, unknown } = pipelineFromRecord(describePipeline(pipeline));
    expect(unknown).toEqual(["mine"]);
    expect(rebuilt.processors.map((processor) => processor.name)).toEqual(
      preset("minimal").processors.map((processor) => processor.name),
    );
  });
});
