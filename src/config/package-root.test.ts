import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { packageRoot } from "./package-root.ts";

const folder = mkdtempSync(join(tmpdir(), "ctxkit-root-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** A copy of the module at `at` (as a bundle or another application would place it), loaded fresh. */
async function copyAt(at: string): Promise<() => string | undefined> {
  mkdirSync(at, { recursive: true });
  const file = join(at, "package-root.ts");
  copyFileSync(fileURLToPath(new URL("./package-root.ts", import.meta.url)), file);
  return ((await import(pathToFileURL(file).href)) as { packageRoot: () => string | undefined }).packageRoot;
}

describe("packageRoot", () => {
  it("is the folder of ctxkit's package.json above this module", () => {
    const root = packageRoot()!;
    expect(root).toBe(fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, ""));
    expect((JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { name: string }).name).toBe(
      "ctxkit",
    );
  });

  it("is found from any depth below the package (a bundle's folder), past other packages' package.json", async () => {
    const pkg = join(folder, "installed");
    mkdirSync(join(pkg, "dist", "cli-bundle", "inner"), { recursive: true });
    writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: "ctxkit" }));
    writeFileSync(join(pkg, "dist", "package.json"), JSON.stringify({ name: "not-ctxkit" }));
    expect((await copyAt(join(pkg, "dist", "cli-bundle", "inner")))()).toBe(pkg);
  });

  it("is undefined outside a ctxkit package (an application's own bundle)", async () => {
    const app = join(folder, "app");
    mkdirSync(app, { recursive: true });
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "my-app" }));
    expect((await copyAt(join(app, "build")))()).toBeUndefined();
  });
});
