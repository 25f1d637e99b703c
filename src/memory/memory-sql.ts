/**
 * SQL shared by the SQLite and PostgreSQL memory stores. Both use the same column names; only the placeholder
 * syntax (`?` or `$n`) and a few functions differ, so the builders take a `bind` function that records a value
 * and returns its placeholder.
 */
import type { ParsedMemoryFilter } from "./memory-schemas.ts";

/** Records a parameter value and returns the placeholder that refers to it. */
export type Bind = (value: string | number | null) => string;

/** Which SQL dialect a builder writes. */
export type SqlDialect = "sqlite" | "postgres";

/**
 * A `bind` for `?` placeholders (SQLite) or `$1, $2, …` (PostgreSQL), and the values bound so far.
 *
 * @example
 * const { bind, values } = parameters("postgres"); bind("ada"); // "$1"
 */
export function parameters(dialect: SqlDialect): { bind: Bind; values: (string | number | null)[] } {
  const values: (string | number | null)[] = [];
  const bind: Bind = (value) => {
    values.push(value);
    return dialect === "sqlite" ? "?" : `$${values.length}`;
  };
  return { bind, values };
}

/**
 * The WHERE conditions (joined with AND) of a memory filter over table alias `m`: owner, scopes, kinds, source
 * session, excluded session and "not expired at `now`".
 *
 * @example
 * const where = filterConditions(filter, now, "sqlite", bind);
 */
export function filterConditions(
  filter: ParsedMemoryFilter,
  now: string,
  dialect: SqlDialect,
  bind: Bind,
): string {
  const conditions = [
    `m.owner = ${bind(filter.owner)}`,
    `(m.expires_at IS NULL OR m.expires_at > ${bind(now)})`,
  ];
  if (filter.scopes !== undefined) conditions.push(`m.scope IN (${filter.scopes.map(bind).join(", ")})`);
  if (filter.kinds !== undefined) conditions.push(`m.kind IN (${filter.kinds.map(bind).join(", ")})`);
  if (filter.sourceSessionId !== undefined)
    conditions.push(`m.source_session_id = ${bind(filter.sourceSessionId)}`);
  if (filter.excludeSessionId !== undefined) {
    const distinct = dialect === "sqlite" ? "IS NOT" : "IS DISTINCT FROM";
    conditions.push(`m.source_session_id ${distinct} ${bind(filter.excludeSessionId)}`);
  }
  return conditions.join(" AND ");
}

/**
 * An expression counting how many `terms` are whole words of `m.normalized` (words are single-space separated).
 *
 * @example
 * matchedTermsExpression(["port", "staging"], "sqlite", bind);
 */
export function matchedTermsExpression(terms: readonly string[], dialect: SqlDialect, bind: Bind): string {
  const padded = "(' ' || m.normalized || ' ')";
  return terms
    .map((term) =>
      dialect === "sqlite"
        ? `(instr(${padded}, ${bind(` ${term} `)}) > 0)`
        : `(strpos(${padded}, ${bind(` ${term} `)}) > 0)::int`,
    )
    .join(" + ");
}

/** The ORDER BY of `list` (newest first, ids compared bytewise in both databases). */
export function newestFirstOrder(dialect: SqlDialect): string {
  return dialect === "sqlite" ? "m.updated_at DESC, m.id DESC" : `m.updated_at DESC, m.id COLLATE "C" DESC`;
}
