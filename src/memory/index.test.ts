import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import * as memory from "./index.ts";

/** Every module `entry` reaches through relative imports, with the bare modules each one imports. */
function moduleGraph(entry: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (graph.has(file)) continue;
    const source = readFileSync(file, "utf8");
    const specifiers = [...source.matchAll(/^(?:import|export)[^;]*?from\s+"([^"]+)"/gms)].map(
      (match) => match[1]!,
    );
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

describe("ctxkit memory barrel", () => {
  it("is core-safe: nothing it reaches imports node:sqlite or pg", () => {
    const graph = moduleGraph(fileURLToPath(new URL("./index.ts", import.meta.url)));
    expect(graph.size).toBeGreaterThan(10);
    const offenders = [...graph].filter(([, bare]) =>
      bare.some((name) => name === "node:sqlite" || name === "pg"),
    );
    expect(offenders.map(([file]) => file)).toEqual([]);
  });

  it("exports the public API", () => {
    expect(typeof memory.InMemoryMemoryStore).toBe("function");
    expect(typeof memory.CoreMemoryBuilder).toBe("function");
    expect(typeof memory.DailyFileSink).toBe("function");
    expect(memory.MEMORY_KINDS).toEqual(["session-summary", "fact", "preference", "note"]);
  });
});
