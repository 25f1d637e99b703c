/**
 * Queries compiled once per database and run with new values: the per-turn writes and reads skip Kysely's
 * builder and compiler after the first call, and keep one SQL text, so `node:sqlite` prepares it once and
 * PostgreSQL sees the same statement every time.
 */
import type { Compilable, CompiledQuery, Kysely, RawBuilder } from "kysely";
import { compiledOf, type SqlTarget } from "./sql-database.ts";
import type { StoreTables } from "./store-tables.ts";

/** Stands for a named parameter while the query is built; its value is given when the query runs. */
export type Parameter<Values> = <Name extends keyof Values>(name: Name) => Values[Name];

interface Template<Row> {
  readonly compiled: CompiledQuery<Row>;
  readonly names: readonly PropertyKey[];
}

const MARK = "\u0000ctxkit-parameter:";

/** A query compiled once per database (dialect and schema), bound to values on each use. */
export interface PreparedQuery<Values, Row> {
  /** The compiled query with these values. */
  bind(database: SqlTarget, values: Values): CompiledQuery<Row>;
}

/**
 * A query built once per builder with named parameters. Every parameter must reach the SQL as a bound value
 * (not inlined), which is checked when it is first compiled.
 *
 * @example
 * const byId = preparedQuery<{ id: string }, { title: string | null }>(({ builder }, p) =>
 *   builder.selectFrom("sessions").select("title").where("id", "=", p("id")),
 * );
 * await queries.first(byId.bind(database, { id: "s1" }));
 */
export function preparedQuery<Values, Row>(
  build: (database: SqlTarget, parameter: Parameter<Values>) => Compilable<Row> | RawBuilder<Row>,
): PreparedQuery<Values, Row> {
  const templates = new WeakMap<Kysely<StoreTables>, Template<Row>>();
  const template = (database: SqlTarget): Template<Row> => {
    const { builder } = database;
    let found = templates.get(builder);
    if (found === undefined) {
      const used = new Set<PropertyKey>();
      const parameter = ((name: PropertyKey) => {
        used.add(name);
        return `${MARK}${String(name)}`;
      }) as Parameter<Values>;
      const compiled = compiledOf(build(database, parameter), builder);
      const names = compiled.parameters.map((value) => {
        if (typeof value !== "string" || !value.startsWith(MARK)) {
          throw new Error(`prepared query: a fixed value ${String(value)} is bound in ${compiled.sql}`);
        }
        return value.slice(MARK.length);
      });
      if (compiled.sql.includes(MARK) || new Set(names).size !== used.size) {
        throw new Error(`prepared query: a parameter is not bound as a value in ${compiled.sql}`);
      }
      found = { compiled, names };
      templates.set(builder, found);
    }
    return found;
  };
  return {
    bind(database, values) {
      const { compiled, names } = template(database);
      const record = values as Record<PropertyKey, unknown>;
      return { ...compiled, parameters: names.map((name) => record[name]) };
    },
  };
}
