import type { Command } from "commander";
import { SessionExistsError, ValidationError } from "../../errors/errors.ts";

/** The flags every import command takes about sessions that already exist. */
export interface ExistingFlags {
  readonly replace?: boolean;
  readonly skipExisting?: boolean;
}

/**
 * Adds `--replace` and `--skip-existing` to an import command.
 *
 * @example
 * withExistingOptions(program.command("import")).action(…);
 */
export function withExistingOptions(command: Command): Command {
  return command
    .option("--replace", "overwrite sessions that already exist")
    .option("--skip-existing", "import only the new sessions; report the existing ones as skipped");
}

/**
 * What the store does with existing sessions: refuse the import (default), replace or skip them.
 *
 * @example
 * onExistingOf({ skipExisting: true }); // "skip"
 */
export function onExistingOf(flags: ExistingFlags): "error" | "replace" | "skip" {
  if (flags.replace === true && flags.skipExisting === true) {
    throw new ValidationError("--replace and --skip-existing contradict each other; give one of them");
  }
  return flags.replace === true ? "replace" : flags.skipExisting === true ? "skip" : "error";
}

/**
 * Runs an import; an existing session that refuses it is reported with the flags that would let it through.
 *
 * @example
 * await explainExisting(() => importTranscriptSessions(store, file, options));
 */
export async function explainExisting<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof SessionExistsError)) throw error;
    throw new SessionExistsError(
      error.sessionId,
      "nothing was imported; pass --replace to overwrite existing sessions or --skip-existing to import only the new ones",
      { cause: error },
    );
  }
}
