import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { z } from "zod";
import { ConfigError } from "../errors/errors.ts";
import { createPipeline, type GovernancePipeline } from "../governance/pipeline.ts";
import type { Processor } from "../governance/processor.ts";

/**
 * What a pipeline module's default export gives: the pipeline itself, or a function of the pipeline the settings'
 * preset selects (so a module can add its processors to the preset's without importing ctxkit).
 */
export type PipelineModuleExport =
  GovernancePipeline | ((base: GovernancePipeline) => GovernancePipeline | Promise<GovernancePipeline>);

/** Makes the pipeline a `--pipeline` module describes from the settings' preset pipeline. */
export type PipelineFromBase = (base: GovernancePipeline) => Promise<GovernancePipeline>;

const processorSchema = z.looseObject({
  name: z.string().min(1),
  process: z.custom<Processor["process"]>((value) => typeof value === "function", "must be a function"),
  triggers: z.array(z.looseObject({ kind: z.string() })).optional(),
});
const pipelineSchema = z.object({
  processors: z.array(processorSchema),
  settings: z.record(z.string(), z.unknown()).optional(),
});

/**
 * Imports a pipeline module (`ctxkit serve --pipeline ./my-pipeline.ts`, `ctxkit chat --pipeline …`): a JavaScript
 * or TypeScript file, relative to `cwd`, whose default export is a pipeline or a function of the preset's pipeline
 * returning one (see `PipelineModuleExport`). Throws `ConfigError` for `--pipeline` when the file cannot be loaded
 * or exports no pipeline; the settings of what it returns are validated (defaults filled in).
 *
 * @example
 * const fromBase = await loadPipelineModule("./my-pipeline.ts", process.cwd());
 * const pipeline = await fromBase(preset("default"));
 */
export async function loadPipelineModule(path: string, cwd: string): Promise<PipelineFromBase> {
  const url = pathToFileURL(resolve(cwd, path)).href;
  let exported: unknown;
  try {
    exported = ((await import(url)) as { default?: unknown }).default;
  } catch (error) {
    throw new ConfigError("--pipeline", `could not load ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (exported === undefined) {
    throw new ConfigError(
      "--pipeline",
      `${path} has no default export; export a pipeline or a function making one`,
    );
  }
  return async (base) => {
    const made =
      typeof exported === "function" ? await (exported as (base: unknown) => unknown)(base) : exported;
    const checked = pipelineSchema.safeParse(made);
    if (!checked.success) {
      const issue = checked.error.issues[0]!;
      throw new ConfigError(
        "--pipeline",
        `${path} gives no pipeline: ${issue.path.join(".") || "(root)"}: ${issue.message} ` +
          "(export { processors, settings? }, or a function of the preset's pipeline returning one)",
      );
    }
    const pipeline = made as GovernancePipeline;
    return createPipeline({ processors: pipeline.processors, settings: pipeline.settings ?? {} });
  };
}
