import { describe, expect, it } from "vitest";
import { MissingDependencyError } from "./errors.ts";
import { optionalPeer } from "./optional-peer.ts";

describe("optionalPeer", () => {
  it("names a package that is not installed and the feature that needs it", async () => {
    const name = "ctxkit-test-no-such-package";
    const loading = optionalPeer(name, "the test feature", () => import(name));
    await expect(loading).rejects.toBeInstanceOf(MissingDependencyError);
    await expect(loading).rejects.toMatchObject({
      code: "missing_dependency",
      packageName: name,
      message: `the test feature needs the package "${name}", which is not installed; run: npm install ${name}`,
    });
  });

  it("returns an installed package and lets other failures through as they are", async () => {
    const zod = await optionalPeer("zod", "validation", () => import("zod"));
    expect(typeof zod.z.object).toBe("function");
    const broken = new SyntaxError("Unexpected token in the package");
    await expect(optionalPeer("zod", "validation", () => Promise.reject(broken))).rejects.toBe(broken);
  });
});
