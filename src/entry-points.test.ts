import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../", import.meta.url));
const packageJson = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  exports: Record<string, string | { types: string; default: string }>;
};

/** The source file behind a subpath export: `./dist/x/index.js` is built from `src/x/index.ts`. */
function sourceOf(subpath: string): string {
  const target = packageJson.exports[subpath];
  if (target === undefined || typeof target === "string") throw new Error(`no code export ${subpath}`);
  return join(root, target.default.replace(/^\.\/dist\//, "src/").replace(/\.js$/, ".ts"));
}

/**
 * The names a module exports, read from its syntax (no type checker, so it is quick): its own exported
 * declarations, its `export { … }` lists and, recursively, what its `export * from` modules export. A name exported
 * both as a type and as a value counts once, as it does for an importer.
 */
function exportedNames(file: string, seen = new Map<string, Set<string>>()): Set<string> {
  const known = seen.get(file);
  if (known !== undefined) return known;
  const names = new Set<string>();
  seen.set(file, names);
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false);
  const exported = (node: ts.Node) =>
    ts.canHaveModifiers(node) &&
    (ts.getModifiers(node) ?? []).some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword);
  for (const statement of source.statements) {
    if (ts.isExportDeclaration(statement)) {
      const from =
        statement.moduleSpecifier !== undefined && ts.isStringLiteral(statement.moduleSpecifier)
          ? resolve(dirname(file), statement.moduleSpecifier.text)
          : undefined;
      const clause = statement.exportClause;
      if (clause === undefined) {
        for (const name of exportedNames(from!, seen)) names.add(name);
      } else if (ts.isNamespaceExport(clause)) {
        names.add(clause.name.text);
      } else {
        for (const element of clause.elements) names.add(element.name.text);
      }
    } else if (ts.isVariableStatement(statement) && exported(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        if (ts.isIdentifier(declaration.name)) names.add(declaration.name.text);
      }
    } else if (
      (ts.isFunctionDeclaration(statement) ||
        ts.isClassDeclaration(statement) ||
        ts.isInterfaceDeclaration(statement) ||
        ts.isTypeAliasDeclaration(statement) ||
        ts.isEnumDeclaration(statement)) &&
      exported(statement) &&
      statement.name !== undefined
    ) {
      names.add(statement.name.text);
    }
  }
  return names;
}

/** Every module `entry` reaches through relative imports, with the bare modules each one imports. */
function moduleGraph(entry: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (graph.has(file)) continue;
    const specifiers = [
      ...readFileSync(file, "utf8").matchAll(/^(?:import|export)[^;]*?from\s+"([^"]+)"/gms),
    ].map((match) => match[1]!);
    graph.set(
      file,
      specifiers.filter((specifier) => !specifier.startsWith(".")),
    );
    for (const specifier of specifiers) {
      if (specifier.startsWith(".")) pending.push(resolve(dirname(file), specifier));
    }
  }
  return graph;
}

/** The subpaths of the core: the root and one per layer below the engine. */
const CORE = [
  ".",
  "./model",
  "./conversation",
  "./formats",
  "./tokens",
  "./pricing",
  "./governance",
  "./summarize",
  "./assembly",
  "./store",
  "./memory",
  "./replay",
  "./metrics",
  "./sync",
];

/** Every `import { … } from "ctxkit…"` in the README, the docs and the examples: the names and the subpath. */
function documentedImports(): { file: string; subpath: string; names: string[] }[] {
  const files = [
    join(root, "README.md"),
    ...readdirSync(join(root, "docs")).map((name) => join(root, "docs", name)),
    ...readdirSync(join(root, "examples")).map((name) => join(root, "examples", name)),
  ].filter((file) => /\.(md|ts)$/.test(file));
  return files.flatMap((file) =>
    [
      ...readFileSync(file, "utf8").matchAll(
        /import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*"(ctxkit(?:\/[\w-]+)?)"/g,
      ),
    ].map((match) => ({
      file: file.slice(root.length),
      subpath: match[2]!.replace(/^ctxkit/, "."),
      names: match[1]!
        .split(",")
        .map((name) => name.trim().replace(/^type\s+/, ""))
        .filter((name) => name !== ""),
    })),
  );
}

describe("package entry points", () => {
  it("the root export is the common path: at most 150 names, no sync, formats or tokenizer internals", () => {
    const names = exportedNames(sourceOf("."));
    expect(names.size).toBeGreaterThan(50);
    expect(names.size).toBeLessThanOrEqual(150);
    for (const name of ["createContextEngine", "EngineSession", "Message", "CtxkitError", "preset"]) {
      expect(names.has(name)).toBe(true);
    }
    // Process-spawning and protocol-level pieces live in their subpaths.
    for (const name of ["CliModel", "runCliCommand", "SyncHub", "toOpenAIChat", "AnchoredTokenAccount"]) {
      expect(names.has(name)).toBe(false);
    }
  });

  it("has subpaths for formats, tokens, sync and the other layers, each built from a source file", () => {
    for (const subpath of [
      "./formats",
      "./tokens",
      "./sync",
      "./governance",
      "./store",
      "./memory",
      "./replay",
    ]) {
      expect(existsSync(sourceOf(subpath)), subpath).toBe(true);
    }
    for (const [subpath, target] of Object.entries(packageJson.exports)) {
      if (typeof target === "string") continue;
      expect(target.types, subpath).toBe(target.default.replace(/\.js$/, ".d.ts"));
      expect(existsSync(sourceOf(subpath)), subpath).toBe(true);
    }
  });

  it("the core subpaths are core-safe: nothing they reach loads a server, a socket or a database driver", () => {
    const heavy = ["ws", "hono", "@hono/node-server", "pg", "kysely", "node:sqlite"];
    for (const subpath of CORE) {
      const graph = moduleGraph(sourceOf(subpath));
      const offenders = [...graph].filter(([, bare]) => bare.some((name) => heavy.includes(name)));
      expect(
        offenders.map(([file]) => file.slice(root.length)),
        subpath,
      ).toEqual([]);
    }
    // The check sees them where they are: the server reaches hono, the SQLite backend node:sqlite.
    expect([...moduleGraph(sourceOf("./server")).values()].flat()).toContain("hono");
    expect([...moduleGraph(sourceOf("./sqlite")).values()].flat()).toContain("node:sqlite");
  });

  it("the subpaths export what the root no longer does", async () => {
    const formats = (await import("./formats/index.ts")) as Record<string, unknown>;
    const sync = (await import("./sync/index.ts")) as Record<string, unknown>;
    const tokens = (await import("./tokens/index.ts")) as Record<string, unknown>;
    expect(typeof formats["importTranscript"]).toBe("function");
    expect(typeof sync["CliModel"]).toBe("function");
    expect(typeof tokens["createEstimatingCounter"]).toBe("function");
  });

  it("every import from ctxkit in the README, the docs and the examples names a subpath that exports it", () => {
    const imports = documentedImports();
    expect(imports.length).toBeGreaterThan(20);
    const unresolved = imports.flatMap(({ file, subpath, names }) => {
      if (packageJson.exports[subpath] === undefined) return [`${file}: no subpath ${subpath}`];
      const exported = exportedNames(sourceOf(subpath));
      return names.filter((name) => !exported.has(name)).map((name) => `${file}: ${name} from ${subpath}`);
    });
    expect(unresolved).toEqual([]);
  });
});
