import { CtxkitError, type CtxkitErrorCode } from "../errors/ctxkit-error.ts";

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

/** One line describing an error for a terminal user: never a stack trace. */
export function describeError(error: unknown): string {
  if (CtxkitError.isInstance(error)) return `ctxkit: ${error.message}`;
  if (error instanceof Error) return `ctxkit: ${error.message}`;
  return `ctxkit: ${String(error)}`;
}
