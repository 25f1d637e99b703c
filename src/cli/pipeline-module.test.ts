import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, ValidationError } from "../errors/errors.ts";
import { preset } from "../governance/presets.ts";
import { loadPipelineModule } from "./pipeline-module.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ctxkit-pipeline-module-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function module(name: string, source: string): Promise<string> {
  await writeFile(join(dir, name), source);
  return `./${name}`;
}

describe("loadPipelineModule", () => {
  it("takes a pipeline, or a function (async too) of the preset's pipeline, and fills in the settings", async () => {
    const plain = await module(
      "plain.mjs",
      'export default { processors: [{ name: "mine", process: (m) => m }], settings: { pricing: "openai" } };\n',
    );
    const fromPlain = await (await loadPipelineModule(plain, dir))(preset("default"));
    expect(fromPlain.processors.map((processor) => processor.name)).toEqual(["mine"]);
    expect(fromPlain.settings).toMatchObject({ pricing: "openai", preflight: true, protectTokens: 1_000 });

    const extending = await module(
      "extending.mjs",
      'export default async (base) => ({ processors: [...base.processors, { name: "last", process: (m) => m }], settings: base.settings });\n',
    );
    const base = preset("aggressive");
    const extended = await (await loadPipelineModule(extending, dir))(base);
    expect(extended.processors.map((processor) => processor.name)).toEqual([
      ...base.processors.map((processor) => processor.name),
      "last",
    ]);
    expect(extended.settings).toEqual(base.settings);
  });

  it("refuses a missing file, a module without a default export or one that gives no pipeline (ConfigError)", async () => {
    await expect(loadPipelineModule("./absent.mjs", dir)).rejects.toThrow(ConfigError);
    const none = await module("none.mjs", "export const pipeline = {};\n");
    await expect(loadPipelineModule(none, dir)).rejects.toThrow(/has no default export/);
    const wrong = await module("wrong.mjs", "export default () => ({ processors: 'all' });\n");
    const fromWrong = await loadPipelineModule(wrong, dir);
    await expect(fromWrong(preset("default"))).rejects.toThrow(/gives no pipeline: processors/);
  });

  it("refuses bad governor settings with the typed error naming the field", async () => {
    const bad = await module(
      "bad.mjs",
      "export default { processors: [], settings: { budgetExitShare: 2 } };\n",
    );
    const error = await (
      await loadPipelineModule(bad, dir)
    )(preset("default")).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues[0]?.path).toBe("budgetExitShare");
  });
});
