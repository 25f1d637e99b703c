/**
 * `ctxkit/sqlite`: the embedded SQLite backends (`node:sqlite`, no native addon): the session store and the
 * long-term memory store. One entry for the package; the two backends stay in their own layers (store/, memory/).
 */
export * from "./store/sqlite/index.ts";
export * from "./memory/sqlite/index.ts";
