import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITS, type ServerLimits } from "../server-options.ts";
import { resolveLimits } from "./request-limits.ts";

const server: ServerLimits = { ...DEFAULT_LIMITS, maxBodyBytes: 100_000, upstreamTimeoutMs: 60_000 };
const tenantRate = { requestsPerSecond: 50, burst: 100 };
const keyRate = { requestsPerSecond: 5, burst: 10, maxWaitMs: 0 };

describe("resolveLimits", () => {
  it("is the server's limits when neither key nor tenant sets any, with no tenant-wide bucket", () => {
    expect(resolveLimits(server, undefined, undefined)).toEqual({
      keyRate: DEFAULT_LIMITS.rateLimit,
      tenantRate: false,
      maxBodyBytes: 100_000,
      upstreamTimeoutMs: 60_000,
    });
  });

  it("takes the most specific body limit and timeout (key, then tenant), stacking the tenant's rate on the key's", () => {
    const tenant = { rateLimit: tenantRate, maxBodyBytes: 50_000, upstreamTimeoutMs: 30_000 };
    expect(resolveLimits(server, tenant, undefined)).toEqual({
      keyRate: DEFAULT_LIMITS.rateLimit,
      tenantRate,
      maxBodyBytes: 50_000,
      upstreamTimeoutMs: 30_000,
    });
    expect(
      resolveLimits(server, tenant, { rateLimit: keyRate, maxBodyBytes: 80_000, upstreamTimeoutMs: 90_000 }),
    ).toEqual({ keyRate, tenantRate, maxBodyBytes: 80_000, upstreamTimeoutMs: 90_000 });
  });

  it("never lets a body limit exceed the server's, and lets a key opt out of the per-key rate only", () => {
    const limits = resolveLimits(
      server,
      { rateLimit: tenantRate },
      { rateLimit: false, maxBodyBytes: 10_000_000 },
    );
    expect(limits).toMatchObject({ keyRate: false, tenantRate, maxBodyBytes: 100_000 });
    expect(resolveLimits({ ...server, rateLimit: false }, undefined, { rateLimit: keyRate }).keyRate).toEqual(
      keyRate,
    );
  });
});
