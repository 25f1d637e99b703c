import { homedir } from "node:os";
import { join } from "node:path";

/** The API key file of `ctxkit serve`: `--keys`, else `~/.ctxkit/server-keys.json`. */
export function keyFile(flag: string | undefined): string {
  return flag ?? join(homedir(), ".ctxkit", "server-keys.json");
}
