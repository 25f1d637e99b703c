/**
 * A PostgreSQL URL for messages: without its password, and without its parameters (`?password=` is one pg takes).
 * "postgres" when there is no URL or it cannot be parsed.
 *
 * @example
 * describePostgres("postgres://app:secret@db:5432/ctxkit?sslmode=require"); // "postgres://app@db:5432/ctxkit"
 */
export function describePostgres(url: string | undefined): string {
  if (url === undefined) return "postgres";
  try {
    const parsed = new URL(url);
    parsed.password = "";
    parsed.search = "";
    parsed.hash = "";
    return parsed.toString();
  } catch {
    return "postgres";
  }
}
