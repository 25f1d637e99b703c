/**
 * The module layering of docs/ARCHITECTURE.md (and DESIGN.md), enforced in `npm test` (test/support/run-all.ts):
 * a folder under src/ may import its own layer and the layers below it, never one above. Tests and test-only
 * helpers (*.test.ts, *.test-helpers.ts, test-support/, fixtures) may import anything: they sit outside the layering.
 * The store conformance kit (store/conformance/, published as `ctxkit/conformance`) is shipped and may import
 * vitest and fast-check, its optional peers.
 *
 * Folders DESIGN.md does not draw are placed by what they are: providers/ (model resolution, error
 * classification) needs only errors/; pricing/ and metrics/ are measures over messages and tokens; replay/ and the
 * ctxkit/test kit (src/test) drive summarizers and governance; telemetry/ and demo/ sit beside the integrations;
 * config/ is the CLI's settings file, a surface. The package entries (src/*.ts) sit on top.
 */
const layers = [
  ["model", "errors"],
  ["providers", "tokens", "pricing", "metrics"],
  ["conversation", "formats"],
  ["store"],
  ["governance", "summarize"],
  ["assembly", "sync", "memory", "replay", "test"],
  ["engine"],
  ["integrations", "telemetry", "demo"],
  ["cli", "server", "config"],
];

const folders = (names) => `^src/(${names.join("|")})/`;
const testOnly = "(\\.test\\.ts|\\.test-helpers\\.ts)$|/test-support/|^src/sync/fixtures/";
const conformanceKit = "^src/store/conformance/";

/** @type {import("dependency-cruiser").IConfiguration} */
export default {
  forbidden: [
    ...layers.slice(0, -1).map((layer, index) => ({
      name: `layer-${layer.join("-")}`,
      comment: `${layer.join(", ")} may import only ${layers
        .slice(0, index + 1)
        .flat()
        .join(", ")} (docs/ARCHITECTURE.md: dependencies point down)`,
      severity: "error",
      from: { path: folders(layer), pathNot: testOnly },
      to: { path: folders(layers.slice(index + 1).flat()) },
    })),
    {
      name: "no-circular",
      comment: "No runtime import cycle (type-only cycles erase at compile time and are allowed)",
      severity: "error",
      from: { pathNot: testOnly },
      to: { circular: true, viaOnly: { dependencyTypesNot: ["type-only"] } },
    },
    {
      name: "runtime-imports-no-tests",
      comment: "Shipped code never imports tests, test-only helpers, vitest or fast-check",
      severity: "error",
      from: { path: "^src/", pathNot: `${testOnly}|^src/test/|${conformanceKit}` },
      to: { path: `${testOnly}|node_modules/(vitest|fast-check)/` },
    },
    {
      name: "core-without-sql-drivers",
      comment:
        "The core entry (ctxkit) never loads Kysely or pg: only the ctxkit/sqlite and ctxkit/postgres subpaths do",
      severity: "error",
      from: { path: "^src/index\\.ts$" },
      to: { path: "node_modules/(kysely|pg)/", reachable: true },
    },
    {
      name: "not-to-unresolvable",
      severity: "error",
      from: { path: "^src/" },
      to: { couldNotResolve: true, pathNot: "^node:" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "default", "types"] },
  },
};
