import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { loadSettings } from "../../config/index.ts";
import { renderStory } from "../../demo/render-story.ts";
import { runDemo } from "../../demo/run-demo.ts";
import { resolveConfiguredModels } from "../../providers/index.ts";
import { openSqliteSessionStore } from "../../store/sqlite/index.ts";
import { createExtractiveSummarizer, createLlmSummarizer, type Summarizer } from "../../summarize/index.ts";
import { estimatorForModel } from "../../tokens/index.ts";
import { progressBar } from "../progress-bar.ts";
import type { CliIo, CommandRegistration } from "../program.ts";

/** The ctxkit package root (where src/ or dist/ is). */
function packageRoot(): string {
  return fileURLToPath(new URL("../../../", import.meta.url));
}

async function demo(options: { db?: string; window: string; temporary?: boolean }, io: CliIo): Promise<void> {
  const root = packageRoot();
  const sourceFolder = existsSync(join(root, "src")) ? "src" : "dist";
  const { settings } = loadSettings({ cwd: process.cwd(), env: io.env });
  const database = options.temporary
    ? join(mkdtempSync(join(tmpdir(), "ctxkit-demo-")), "demo.db")
    : (options.db ?? settings.db);
  const store = await openSqliteSessionStore({ path: database });
  try {
    const counter = estimatorForModel("claude-sonnet-4-5");
    let summarizer: Summarizer = createExtractiveSummarizer({ counter });
    if (settings.model !== undefined) {
      const { model, summarizationModel } = await resolveConfiguredModels(settings, { env: io.env });
      summarizer = createLlmSummarizer({ model: summarizationModel ?? model, fallback: summarizer });
    }
    const progress = progressBar(io, "demo");
    const report = await runDemo({
      store,
      root,
      sourceFolder,
      contextWindow: Number(options.window),
      counter,
      summarizer,
      onProgress: (done, total) => progress.update(done, total),
    });
    progress.done();
    io.stdout.write(renderStory(report, { database }));
  } finally {
    await store.close();
  }
}

/** `ctxkit demo`: the offline demo — a scripted coding agent through the whole engine, told as a story. */
export const registerDemo: CommandRegistration = (program: Command, io: CliIo) => {
  program
    .command("demo")
    .description("run a realistic coding-agent session through ctxkit offline and show what governance did")
    .option("--db <path>", "SQLite database to store the demo session in (default: the configured one)")
    .option("--temporary", "store the session in a throwaway database")
    .option("--window <tokens>", "context window of the simulated model", "48000")
    .action((options: { db?: string; window: string; temporary?: boolean }) => demo(options, io));
};
