import pg from "pg";
import { z } from "zod";
import { validate } from "../../model/schemas.ts";
import { applyOpenRetention } from "../open-retention.ts";
import type { OpenRetentionOptions, SessionStoreOptions } from "../session-store.ts";
import { storeContext } from "../store-context.ts";
import { PostgresDatabase, toPostgresStoreError } from "./postgres-database.ts";
import { migratePostgres } from "./postgres-schema.ts";
import { PostgresSessionStore } from "./postgres-session-store.ts";
import { describePostgres } from "./postgres-location.ts";

/** Options of `openPostgresSessionStore`: a connection string, or a pool you own. */
export interface PostgresSessionStoreOptions extends SessionStoreOptions, OpenRetentionOptions {
  /** `postgres://user:password@host:5432/database`. */
  readonly connectionString?: string;
  /** A pool to use instead (not ended by `close()`). */
  readonly pool?: pg.Pool;
  /** Schema holding ctxkit's tables, created when missing (default `public`). */
  readonly schema?: string;
  /** Connections of the pool the store creates (default 10). */
  readonly poolSize?: number;
}

/**
 * A `postgres://` or `postgresql://` URL: what `pg` reads. Keyword settings (`host=db password=…`, libpq's other
 * form) are refused here; `pg` would take them for a relative URL and look for a host named "base".
 */
export const postgresUrlSchema = z
  .string()
  .min(1)
  .refine((url) => /^postgres(?:ql)?:\/\//i.test(url.trim()), {
    message:
      "give a postgres:// URL, e.g. postgres://app@db.example:5432/ctxkit with the password after the user " +
      "name and a colon (keyword settings such as host=… are not read: write them as such a URL, " +
      "percent-encoding special characters)",
  });

const optionsSchema = z.object({
  connectionString: postgresUrlSchema.optional(),
  schema: z.string().min(1).max(63).optional(),
  poolSize: z.number().int().min(1).max(1000).optional(),
});

/**
 * Opens the PostgreSQL session store: connects, creates or migrates the schema (refusing one written by a
 * newer ctxkit). Opening never deletes sessions unless `retentionDays` asks for it (see `OpenRetentionOptions`).
 *
 * @example
 * const store = await openPostgresSessionStore({ connectionString: process.env.CTXKIT_PG_URL });
 */
export async function openPostgresSessionStore(
  options: PostgresSessionStoreOptions,
): Promise<PostgresSessionStore> {
  const checked = validate(
    optionsSchema,
    { connectionString: options.connectionString, schema: options.schema, poolSize: options.poolSize },
    "PostgreSQL store options",
  );
  const context = storeContext(options);
  const location = describePostgres(checked.connectionString);
  const pool =
    options.pool ?? new pg.Pool({ connectionString: checked.connectionString, max: checked.poolSize ?? 10 });
  const database = new PostgresDatabase(pool, {
    schema: checked.schema ?? "public",
    location,
    ownsPool: options.pool === undefined,
  });
  let store: PostgresSessionStore;
  try {
    await migratePostgres(database);
    store = new PostgresSessionStore(database, context);
    store.startIndexing();
  } catch (error) {
    await database.close();
    throw toPostgresStoreError(error, location);
  }
  await applyOpenRetention(store, options).catch((error: unknown) => {
    throw toPostgresStoreError(error, location);
  });
  return store;
}
