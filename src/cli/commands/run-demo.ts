/** What `ctxkit demo` does once its flags are parsed (loaded only when the command runs). */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { loadSettings } from "../../config/index.ts";
import { packageRoot } from "../../config/package-root.ts";
import { UnsupportedError, ValidationError } from "../../errors/errors.ts";
import { renderStory } from "../../demo/render-story.ts";
import { DEMO_AGENT, demoReport, runDemo, type DemoRun } from "../../demo/run-demo.ts";
import { DEMO_MIN_WINDOW } from "../../demo/demo-window.ts";
import { randomIds } from "../../model/ids.ts";
import { validate } from "../../model/schemas.ts";
import { resolveConfiguredModels } from "../../providers/index.ts";
import { MemorySessionStore } from "../../store/memory/index.ts";
import type { SessionStore } from "../../store/session-store.ts";
import { openSqliteSessionStore } from "../../store/sqlite/index.ts";
import { createExtractiveSummarizer, createLlmSummarizer, type Summarizer } from "../../summarize/index.ts";
import { estimatorForModel } from "../../tokens/index.ts";
import { buildTimeline } from "../../server/routes/inspector-timeline.ts";
import { cliCommand } from "../cli-command.ts";
import { progressBar } from "../progress-bar.ts";
import { storedSessionReplay } from "../stored-session-replay.ts";
import type { CliIo } from "../program.ts";

export interface DemoFlags {
  readonly db?: string;
  readonly window: string;
  readonly temporary?: boolean;
}

const optionsSchema = z.object({
  window: z.coerce
    .number({ error: "--window must be a number of tokens" })
    .int("--window must be a whole number of tokens")
    .min(
      DEMO_MIN_WINDOW,
      `--window must be at least ${DEMO_MIN_WINDOW.toLocaleString("en-US")} tokens, the smallest window ` +
        "every step of the demo fits in",
    ),
});

/** Deletes the demo's sessions other than `keep` (earlier runs, and any a killed run left): returns how many. */
async function removeEarlierRuns(store: SessionStore, keep: string): Promise<number> {
  const earlier: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listSessions({
      agent: DEMO_AGENT,
      limit: 1000,
      ...(cursor !== undefined && { cursor }),
    });
    earlier.push(...page.sessions.map((session) => session.id).filter((id) => id !== keep));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  for (const id of earlier) await store.deleteSession(id);
  return earlier.length;
}

export async function runDemoCommand(flags: DemoFlags, io: CliIo): Promise<void> {
  const { window: contextWindow } = validate(optionsSchema, { window: flags.window }, "demo options");
  if (flags.temporary === true && flags.db !== undefined) {
    throw new ValidationError(
      "--temporary keeps the session in memory and --db names a database; give one of them",
    );
  }
  const root = packageRoot();
  if (root === undefined)
    throw new UnsupportedError(
      "ctxkit demo reads ctxkit's own sources: run it from an installed ctxkit package",
    );
  const sourceFolder = existsSync(join(root, "src")) ? "src" : "dist";
  const { settings } = loadSettings({ cwd: process.cwd(), env: io.env });
  const database = flags.temporary === true ? undefined : (flags.db ?? settings.db);
  // --temporary: nothing on disk, so nothing is left behind however the run ends (an error, Ctrl-C, a kill).
  const store =
    database === undefined ? new MemorySessionStore() : await openSqliteSessionStore({ path: database });
  const sessionId = randomIds("ses");
  try {
    const counter = estimatorForModel("claude-sonnet-4-5");
    let summarizer: Summarizer = createExtractiveSummarizer({ counter });
    if (settings.model !== undefined) {
      const { model, summarizationModel } = await resolveConfiguredModels(settings, { env: io.env });
      summarizer = createLlmSummarizer({ model: summarizationModel ?? model, fallback: summarizer });
    }
    const progress = progressBar(io, "demo");
    let run: DemoRun;
    try {
      run = await runDemo({
        store,
        root,
        sourceFolder,
        contextWindow,
        counter,
        summarizer,
        sessionId,
        onProgress: (done, total) => progress.update(done, total),
      });
    } catch (error) {
      // A failed run leaves no half session; should this delete fail, the next run's clean-up removes it.
      await store.deleteSession(sessionId).catch(() => false);
      throw error;
    }
    progress.done();
    // The figures are the replay of the stored session, as the inspector and `ctxkit replay --session` show it.
    const { messages, settings: replay } = await storedSessionReplay(store, run.sessionId);
    const report = demoReport(run, await buildTimeline(messages, replay));
    const replaced = database === undefined ? 0 : await removeEarlierRuns(store, report.sessionId);
    const command = cliCommand(root);
    io.stdout.write(
      renderStory(report, database === undefined ? { command } : { database, replaced, command }),
    );
  } finally {
    await store.close();
  }
}
