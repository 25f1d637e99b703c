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
};

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
