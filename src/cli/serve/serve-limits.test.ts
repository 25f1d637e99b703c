import { describe, expect, it } from "vitest";
import { ConfigError } from "../../errors/errors.ts";
import { DEFAULT_LIMITS } from "../../server/server-options.ts";
import { describeLimits, keyLimits, serveLimits } from "./serve-limits.ts";

describe("serveLimits", () => {
  it("reads each flag over the defaults", () => {
    expect(serveLimits({})).toEqual(DEFAULT_LIMITS);
    expect(serveLimits({ rateLimit: "100" }).rateLimit).toEqual({
      requestsPerSecond: 100,
      burst: 200,
      maxWaitMs: 5_000,
    });
    expect(serveLimits({ rateLimit: "10/15/0.5" }).rateLimit).toEqual({
      requestsPerSecond: 10,
      burst: 15,
      maxWaitMs: 500,
    });
    expect(serveLimits({ rateLimit: "off" }).rateLimit).toBe(false);
    expect(serveLimits({ maxBody: "8MiB" }).maxBodyBytes).toBe(8 * 1024 * 1024);
    expect(serveLimits({ maxBody: "500000" }).maxBodyBytes).toBe(500_000);
    expect(serveLimits({ maxBody: "2 kb" }).maxBodyBytes).toBe(2_000);
    expect(serveLimits({ upstreamTimeout: "30" }).upstreamTimeoutMs).toBe(30_000);
  });

  it.each([
    [{ rateLimit: "fast" }, "--rate-limit"],
    [{ rateLimit: "0" }, "--rate-limit"],
    [{ rateLimit: "10/0" }, "--rate-limit"],
    [{ rateLimit: "1/2/3/4" }, "--rate-limit"],
    [{ maxBody: "4 GiB" }, "--max-body"],
    [{ maxBody: "12" }, "--max-body"],
    [{ upstreamTimeout: "-1" }, "--upstream-timeout"],
    [{ upstreamTimeout: "soon" }, "--upstream-timeout"],
  ])("refuses %j naming the flag", (flags, flag) => {
    expect(() => serveLimits(flags)).toThrow(ConfigError);
    expect(() => serveLimits(flags)).toThrow(flag);
  });
});

describe("keyLimits and describeLimits", () => {
  it("keep only the flags given, and show them as the flags that set them", () => {
    expect(keyLimits({})).toEqual({});
    const limits = keyLimits({ rateLimit: "5/10/1.5", maxBody: "64KiB", upstreamTimeout: "30" });
    expect(limits).toEqual({
      rateLimit: { requestsPerSecond: 5, burst: 10, maxWaitMs: 1_500 },
      maxBodyBytes: 65_536,
      upstreamTimeoutMs: 30_000,
    });
    expect(describeLimits(limits)).toBe("--rate-limit 5/10/1.5 --max-body 64KiB --upstream-timeout 30");
    expect(describeLimits(keyLimits({ rateLimit: "off", maxBody: "2MiB" }))).toBe(
      "--rate-limit off --max-body 2MiB",
    );
    expect(describeLimits({ maxBodyBytes: 5_000 })).toBe("--max-body 5000");
    expect(describeLimits({})).toBe("");
    expect(() => keyLimits({ upstreamTimeout: "0" })).toThrow("--upstream-timeout");
  });
});
