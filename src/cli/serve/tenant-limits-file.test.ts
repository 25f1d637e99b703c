import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../errors/errors.ts";
import { readTenantLimits } from "./tenant-limits-file.ts";

const folder = mkdtempSync(join(tmpdir(), "ctxkit-tenant-limits-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

function file(text: string): string {
  const path = join(folder, `${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, text);
  return path;
}

describe("readTenantLimits", () => {
  it("reads each tenant's limits", () => {
    const limits = {
      acme: { rateLimit: { requestsPerSecond: 20, burst: 40, maxWaitMs: 5_000 }, maxBodyBytes: 1_048_576 },
      globex: { upstreamTimeoutMs: 30_000 },
    };
    expect(readTenantLimits(file(JSON.stringify(limits)))).toEqual(limits);
  });

  it.each([
    ["a missing file", undefined, /cannot read/],
    ["not JSON", "{acme:", /is not JSON/],
    [
      "a bad limit",
      '{"acme": {"rateLimit": {"requestsPerSecond": -1, "burst": 2}}}',
      /acme\.rateLimit\.requestsPerSecond/,
    ],
    ["a misspelt limit", '{"acme": {"maxBody": 4096}}', /maxBody/],
    ["a bad tenant name", '{"no spaces": {}}', /no spaces/],
  ])("refuses %s with a ConfigError naming --tenant-limits", (_what, text, detail) => {
    const path = text === undefined ? join(folder, "absent.json") : file(text);
    expect(() => readTenantLimits(path)).toThrow(ConfigError);
    expect(() => readTenantLimits(path)).toThrow(/--tenant-limits/);
    expect(() => readTenantLimits(path)).toThrow(detail);
  });
});
