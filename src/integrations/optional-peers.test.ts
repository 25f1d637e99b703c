import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");

/** Each optional peer dependency, and the only folders (subpath exports) allowed to import it. */
const peers: Record<string, readonly string[]> = {
  "@opentelemetry/": ["telemetry/"],
  langchain: ["integrations/langchain/"],
  "@langchain/": ["integrations/langchain/"],
  "@mastra/": ["integrations/mastra/"],
  "@openai/agents": ["integrations/openai-agents/"],
};

function sources(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

describe("optional peer dependencies", () => {
  it("are imported only by the subpath that needs them, so `ctxkit` itself never loads them", () => {
    const offenders: string[] = [];
    for (const path of sources(root)) {
      const file = relative(root, path);
      const imports = [...readFileSync(path, "utf8").matchAll(/from\s+"([^"]+)"/g)].map((match) => match[1]!);
      for (const [peer, allowed] of Object.entries(peers)) {
        const uses = imports.some((specifier) => specifier === peer || specifier.startsWith(peer));
        if (uses && !allowed.some((folder) => file.startsWith(folder)))
          offenders.push(`${file} imports ${peer}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
