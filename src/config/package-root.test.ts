import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { packageRoot } from "./package-root.ts";

describe("packageRoot", () => {
  it("is the folder of ctxkit's package.json above this module", () => {
    const root = packageRoot();
    expect(root).toBe(fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, ""));
    expect((JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { name: string }).name).toBe(
      "ctxkit",
    );
  });
});
