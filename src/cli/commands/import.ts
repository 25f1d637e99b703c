import { Option, type Command } from "commander";
import {
  TRANSCRIPT_FORMATS,
  type TranscriptFormat,
} from "../../formats/transcripts/imported-conversation.ts";
import { PartialLastLineError } from "../../errors/errors.ts";
import { importTranscriptSessions } from "../../store/jsonl/import-transcript-sessions.ts";
import { progressBar } from "../progress-bar.ts";
import type { CliIo, CommandRegistration } from "../program.ts";
import { explainExisting, onExistingOf, withExistingOptions, type ExistingFlags } from "./import-flags.ts";
import { formatImported } from "./sessions-format.ts";
import { withCliStore, withStoreOptions, type StoreFlags } from "./sessions-store.ts";

interface ImportFlags extends StoreFlags, ExistingFlags {
  readonly format: TranscriptFormat | "auto";
  readonly dropPartialLastLine?: boolean;
  readonly json?: boolean;
}

/** Reads the transcript; a cut-off last line is reported with the flag that imports the rest. */
async function withPartialLineHint<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof PartialLastLineError) || error.line === undefined) throw error;
    throw new PartialLastLineError(
      error.source,
      error.line,
      `pass --drop-partial-last-line to import it up to line ${error.line - 1}`,
    );
  }
}

/**
 * `ctxkit import <transcript> [--format …] [--db <path>|--pg <url>] [--replace|--skip-existing]
 * [--drop-partial-last-line] [--json]`:
 * imports a real transcript (Claude Code, Codex, Gemini CLI, OpenAI chat, SWE-agent or ctxkit JSONL) into the
 * session store, one session per conversation, all or nothing (one transaction). With `--json` it prints
 * `{ "sessions": [{ "id", "messages", "turns", "toolCalls" }], "skipped": [ids] }`; a long import shows
 * progress on stderr when that is a terminal.
 *
 * @example
 * await runCli(["import", "session.jsonl", "--db", "/tmp/ctxkit.db", "--json"], io);
 */
export const registerImport: CommandRegistration = (program: Command, io: CliIo) => {
  withStoreOptions(
    withExistingOptions(
      program
        .command("import")
        .description(
          "import a transcript (Claude Code, Codex, Gemini CLI, OpenAI, SWE-agent, ctxkit) as sessions",
        )
        .argument("<transcript>", "transcript file"),
    ),
  )
    .addOption(
      new Option("--format <format>", "transcript format")
        .choices([...TRANSCRIPT_FORMATS, "auto"])
        .default("auto"),
    )
    .option(
      "--drop-partial-last-line",
      "import a transcript still being written up to its last whole line (a cut-off last line is left out)",
    )
    .option("--json", "print JSON")
    .action((file: string, flags: ImportFlags) => {
      const onExisting = onExistingOf(flags);
      return withCliStore(flags, io, async ({ store }) => {
        const progress = progressBar(io, "import");
        const result = await explainExisting(() =>
          withPartialLineHint(() =>
            importTranscriptSessions(store, file, {
              format: flags.format,
              onExisting,
              partialLastLine: flags.dropPartialLastLine === true ? "drop" : "error",
              onProgress: (done, total) => progress.update(done, total),
            }),
          ),
        );
        progress.done();
        io.stdout.write(
          flags.json === true
            ? `${JSON.stringify(result, null, 2)}\n`
            : formatImported(result.sessions, result.skipped),
        );
      });
    });
};
