import pg from "pg";
import { z } from "zod";
import { validate } from "../../model/schemas.ts";
import { PostgresDatabase, toPostgresStoreError } from "../../store/postgres/postgres-database.ts";
import { migratePostgres } from "../../store/postgres/postgres-schema.ts";
import { memoryStoreContext } from "../memory-plan.ts";
import type { MemoryStoreOptions } from "../memory-store.ts";
import { PostgresMemoryStore } from "./postgres-memory-store.ts";
import { describePostgres } from "../../store/postgres/postgres-location.ts";
import { postgresUrlSchema } from "../../store/postgres/open-postgres-session-store.ts";

/** Options of `openPostgresMemoryStore`: a connection string, or a pool you own. */
export interface PostgresMemoryStoreOptions extends MemoryStoreOptions {
  /** `postgres://user:password@host:5432/database`. */
  readonly connectionString?: string;
  /** A pool to use instead (not ended by `close()`); the session store's pool works. */
  readonly pool?: pg.Pool;
  /** Schema holding ctxkit's tables, created when missing (default `public`). */
  readonly schema?: string;
  /** Connections of the pool the store creates (default 10). */
  readonly poolSize?: number;
}

const optionsSchema = z
  .object({
    connectionString: postgresUrlSchema.optional(),
    schema: z.string().min(1).max(63).optional(),
    poolSize: z.number().int().min(1).max(1000).optional(),
    hasPool: z.boolean(),
  })
  .refine((options) => options.hasPool || options.connectionString !== undefined, {
    message: "pass a connectionString or a pool",
  });

/**
 * Opens the PostgreSQL memory store: connects, creates or migrates the ctxkit schema (one schema, one version,
 * shared with the session store; refusing one written by a newer ctxkit) under an advisory lock. Use the session
 * store's schema to keep everything in one place.
 *
 * @example
 * const memories = await openPostgresMemoryStore({ connectionString: process.env.CTXKIT_PG_URL });
 */
export async function openPostgresMemoryStore(
  options: PostgresMemoryStoreOptions,
): Promise<PostgresMemoryStore> {
  const checked = validate(
    optionsSchema,
    {
      connectionString: options.connectionString,
      schema: options.schema,
      poolSize: options.poolSize,
      hasPool: options.pool !== undefined,
    },
    "PostgreSQL memory store options",
  );
  const location = describePostgres(checked.connectionString);
  const pool =
    options.pool ?? new pg.Pool({ connectionString: checked.connectionString, max: checked.poolSize ?? 10 });
  const database = new PostgresDatabase(pool, {
    schema: checked.schema ?? "public",
    location,
    ownsPool: options.pool === undefined,
  });
  try {
    await migratePostgres(database);
    return new PostgresMemoryStore(database, memoryStoreContext(options));
  } catch (error) {
    await database.close();
    throw toPostgresStoreError(error, location);
  }
}
