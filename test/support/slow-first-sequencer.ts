/**
 * vitest's test order, with the files that take longest started first. vitest orders files by their timings
 * from earlier runs, and on a first run (a fresh clone: CI, a new contributor) by size, larger first; the
 * slowest files here are small ones that start dozens of processes or run 10,000-case properties, so a first
 * run started them last and waited on them alone at the end.
 */
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** The slowest files (tens of seconds each on a 2-core machine), slowest first. */
const SLOWEST = [
  "test/store/sqlite-crash.test.ts",
  "src/cli/commands/serve.test.ts",
  "test/store/postgres-crash.test.ts",
  "src/governance/window-fit.test.ts",
  "test/store/transcript-round-trip.test.ts",
  "src/replay/transcripts.test.ts",
  "src/governance/invariants.test.ts",
  "src/store/sqlite/sqlite-session-store.test.ts",
  "src/cli/commands/demo.test.ts",
];

const rank = (spec: TestSpecification) => {
  const index = SLOWEST.findIndex((path) => spec.moduleId.endsWith(path));
  return index === -1 ? SLOWEST.length : index;
};

/** vitest's order (groups, timings, sizes), with the slowest files moved to the front of their group. */
export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const group = (spec: TestSpecification) => spec.project.config.sequence.groupOrder;
    return sorted
      .map((spec, index) => ({ spec, index }))
      .sort((a, b) => group(a.spec) - group(b.spec) || rank(a.spec) - rank(b.spec) || a.index - b.index)
      .map(({ spec }) => spec);
  }
}
