import { CtxkitError, type CtxkitErrorCode } from "../errors/ctxkit-error.ts";
import { redactSecrets } from "../errors/redact-secrets.ts";

/** Exit code for each error code: 2 for bad input the user can fix, 1 for everything else. */
const exitCodes: Partial<Record<CtxkitErrorCode, number>> = {
  invalid_input: 2,
  parse_error: 2,
  unknown_format: 2,
  not_found: 2,
  config_error: 2,
  schema_too_new: 2,
  corrupt_store: 2,
  file_access: 2,
  missing_dependency: 2,
};

/** What each exit code of `ctxkit` means: shown by `ctxkit --help` and in the README. */
export const EXIT_CODE_MEANINGS: readonly (readonly [code: number, meaning: string])[] = [
  [0, "success"],
  [1, "failure outside the command's input: a provider, network or storage error, a context that cannot fit"],
  [2, "usage error: a bad option, argument, file, format, id or setting, or a database that is not ctxkit's"],
];

/** `text` in lines of at most `width` characters, each after the first indented by `indent` spaces. */
function wrap(text: string, width: number, indent: number): string {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && line.length + 1 + word.length > width - indent) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  lines.push(line);
  return lines.join(`\n${" ".repeat(indent)}`);
}

/**
 * The exit codes as a `--help` section.
 *
 * @example
 * program.addHelpText("afterAll", exitCodesHelp());
 */
export function exitCodesHelp(): string {
  const rows = EXIT_CODE_MEANINGS.map(([code, meaning]) => `  ${code}  ${wrap(meaning, 100, 5)}`);
  return `\nExit codes:\n${rows.join("\n")}\n`;
}

/** The process exit code for an error. */
export function exitCodeFor(error: unknown): number {
  if (!CtxkitError.isInstance(error)) return 1;
  return exitCodes[error.code] ?? 1;
}

/**
 * One line describing an error for a terminal user: never a stack trace, never a key (known key shapes and the
 * values of secret-looking variables of `env` are redacted).
 */
export function describeError(
  error: unknown,
  env: Readonly<Record<string, string | undefined>> = {},
): string {
  const message = CtxkitError.isInstance(error) || error instanceof Error ? error.message : String(error);
  return `ctxkit: ${redactSecrets(message, { env })}`;
}
