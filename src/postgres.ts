/**
 * `ctxkit/postgres`: the PostgreSQL backends for many agent servers sharing one database: the session store and
 * the long-term memory store. One entry for the package; the two backends stay in their own layers (store/,
 * memory/). Needs the optional peer `pg`.
 */
export * from "./store/postgres/index.ts";
export * from "./memory/postgres/index.ts";
