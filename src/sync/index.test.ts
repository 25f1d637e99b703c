import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import * as core from "../index.ts";
import * as server from "../server/index.ts";
import * as sync from "./index.ts";

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

describe("ctxkit sync barrel", () => {
  it("is core-safe: nothing it reaches imports ws, hono or a database driver", () => {
    const graph = moduleGraph(fileURLToPath(new URL("./index.ts", import.meta.url)));
    expect(graph.size).toBeGreaterThan(20);
    const heavy = ["ws", "hono", "@hono/node-server", "pg", "node:sqlite"];
    const offenders = [...graph].filter(([, bare]) => bare.some((name) => heavy.includes(name)));
    expect(offenders.map(([file]) => file)).toEqual([]);
  });

  it("is the ctxkit/sync subpath, not part of the core entry; the WebSocket endpoint is in ctxkit/server", () => {
    for (const name of ["ConversationLedger", "SyncClient", "SyncHub", "CliModel", "toCliPrompt"] as const) {
      expect(typeof sync[name]).toBe("function");
      expect(name in core).toBe(false);
    }
    expect(sync.SYNC_SUBPROTOCOL).toBe("ctxkit.sync");
    expect(typeof server.attachSyncEndpoint).toBe("function");
    expect("attachSyncEndpoint" in core).toBe(false);
  });
});
