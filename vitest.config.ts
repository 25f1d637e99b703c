import { defineConfig } from "vitest/config";
import { SlowFirstSequencer } from "./test/support/slow-first-sequencer.ts";

const all = ["src/**/*.test.ts", "test/**/*.test.ts"];
/** Test files that change process-wide state that worker threads cannot have (process.chdir). */
const ownProcess = ["src/cli/commands/config.test.ts"];
/** Test files that assert the event loop stays responsive: they run alone, after the others, not competing for CPU. */
const alone = ["src/server/huge-request.test.ts", "test/inspector/timeline-limits.test.ts"];

// Most test files share a few long-lived worker threads (no process or module graph per file); tests that spawn
// the CLI, PostgreSQL or Chromium spend much of their time waiting, so three workers share the machine's two cores.
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Temporary files in RAM when the machine has room, a compile cache for every Node process the tests start,
    // those programs bundled from the current source, and one PostgreSQL server for the whole run (unless CTXKIT_TEST_PG_URL names one) — in this order.
    globalSetup: [
      "test/support/ram-temp-dir.ts",
      "test/support/compile-cache.ts",
      "test/support/test-bundle.ts",
      "test/store/pg-server.ts",
    ],
    maxWorkers: 3,
    sequence: { sequencer: SlowFirstSequencer },
    projects: [
      {
        extends: true,
        test: {
          name: "threads",
          include: all,
          exclude: [...ownProcess, ...alone],
          pool: "threads",
          isolate: false,
        },
      },
      { extends: true, test: { name: "forks", include: ownProcess, pool: "forks" } },
      {
        extends: true,
        test: { name: "alone", include: alone, pool: "forks", maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
