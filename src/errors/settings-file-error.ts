import type { CtxkitErrorOptions } from "./ctxkit-error.ts";
import { ConfigError } from "./errors.ts";

/** Where in a file a problem is (1-based). */
export interface FilePosition {
  readonly line: number;
  readonly column: number;
}

/**
 * A settings file that cannot be used as a whole: malformed JSON, not an object, unreadable. A ConfigError
 * (code `config_error`) whose `key` is the file, with the position of the problem when known.
 *
 * @example
 * new SettingsFileError("/repo/.ctxkit/settings.json", "expected ':' after property name", { line: 3, column: 7 });
 * // message: /repo/.ctxkit/settings.json:3:7: expected ':' after property name; fix the file …
 */
export class SettingsFileError extends ConfigError {
  readonly file: string;
  readonly position: FilePosition | undefined;
  constructor(file: string, detail: string, position?: FilePosition, options?: CtxkitErrorOptions) {
    super(file, detail, options);
    const where = position === undefined ? file : `${file}:${position.line}:${position.column}`;
    this.message = `${where}: ${detail}; fix the file or delete it to fall back to other settings`;
    this.file = file;
    this.position = position;
  }
}
