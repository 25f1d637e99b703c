import { z } from "zod";
import type { JsonValue } from "../model/message.ts";
import { resolveGovernorSettings, type GovernorSettings } from "./governor-settings.ts";
import { createPipeline, type GovernancePipeline } from "./pipeline.ts";
import type { Processor } from "./processor.ts";
import { createCompactHistory } from "./processors/compact-history.ts";
import { createCompactSettledHistory } from "./processors/compact-settled-history.ts";
import { createCompressSmallHistory } from "./processors/compress-small-history.ts";
import { createElideOlderToolInputs } from "./processors/elide-older-tool-inputs.ts";
import { createReplaceOlderBinaries } from "./processors/replace-older-binaries.ts";
import { createStripOlderReasoning } from "./processors/strip-older-reasoning.ts";
import { createOffloadToolOutputs } from "./processors/tool-output-offload.ts";
import { createTrimTurns } from "./processors/trim-turns.ts";
import { createCapToolResults, createTruncateToolResults } from "./processors/truncate-tool-results.ts";
import { createUseCompactSummaries } from "./processors/use-compact-summaries.ts";

/** A pipeline as JSON: each processor's name and resolved options, and the governor settings. */
export interface PipelineRecord {
  readonly processors: readonly {
    readonly name: string;
    readonly options?: { readonly [key: string]: JsonValue };
  }[];
  readonly settings: GovernorSettings;
}

/** The built-in factories, by the name of the processor each makes. */
const FACTORIES: Readonly<Record<string, (options: never) => Processor>> = {
  "cap-tool-results": createCapToolResults,
  "strip-older-reasoning": createStripOlderReasoning,
  "replace-older-binaries": createReplaceOlderBinaries,
  "use-compact-summaries": createUseCompactSummaries,
  "offload-tool-outputs": createOffloadToolOutputs,
  "elide-older-tool-inputs": createElideOlderToolInputs,
  "truncate-tool-results": createTruncateToolResults,
  "trim-turns": createTrimTurns,
  "compact-settled-history": createCompactSettledHistory,
  "compact-history": createCompactHistory,
  "compress-small-history": createCompressSmallHistory,
};

/** The shape of a stored `PipelineRecord` (settings checked by `resolveGovernorSettings`). */
export const pipelineRecordSchema = z.object({
  processors: z.array(z.object({ name: z.string(), options: z.record(z.string(), z.json()).optional() })),
  settings: z.record(z.string(), z.json()),
});

/**
 * A pipeline as JSON to store beside a session (its governance record).
 *
 * @example
 * describePipeline(preset("default")).processors[0]; // { name: "cap-tool-results", options: { capShare: 0.5, … } }
 */
export function describePipeline(pipeline: GovernancePipeline): PipelineRecord {
  return JSON.parse(
    JSON.stringify({
      processors: pipeline.processors.map((processor) => ({
        name: processor.name,
        ...(processor.options !== undefined && { options: processor.options }),
      })),
      settings: pipeline.settings,
    }),
  ) as PipelineRecord;
}

/**
 * The pipeline a record describes, rebuilt from the built-in factories; processors of one's own cannot be rebuilt
 * and are left out (`unknown` names them). Throws `ValidationError` for options or settings that are not valid.
 *
 * @example
 * const { pipeline } = pipelineFromRecord(describePipeline(preset("aggressive")));
 */
export function pipelineFromRecord(record: PipelineRecord | z.output<typeof pipelineRecordSchema>): {
  pipeline: GovernancePipeline;
  unknown: string[];
} {
  const unknown: string[] = [];
  const processors: Processor[] = [];
  for (const { name, options } of record.processors) {
    const factory = FACTORIES[name];
    if (factory === undefined) unknown.push(name);
    else processors.push(factory((options ?? {}) as never));
  }
  // Checked here: a stored record may come from another version.
  const settings = resolveGovernorSettings(record.settings);
  return { pipeline: createPipeline({ processors, settings }), unknown };
}
