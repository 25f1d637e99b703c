/**
 * `ctxkit/conformance`: the conformance suite every ctxkit `SessionStore` passes (memory, SQLite, PostgreSQL),
 * for a third-party backend to prove itself. Call `describeSessionStoreConformance` in a vitest test file with a
 * way to open fresh stores; it declares ~36 tests (turns, compactions, governor state, queries, blobs, export and
 * import byte for byte, and a property test of random concurrent writes). Needs `vitest` and `fast-check`
 * (optional peer dependencies of ctxkit). See docs/testing.md.
 */
export { describeSessionStoreConformance } from "./store/conformance/describe-conformance.ts";
export type { ConformanceBackend } from "./store/conformance/conformance-fixtures.ts";
