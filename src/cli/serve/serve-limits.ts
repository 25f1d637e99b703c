import { ConfigError } from "../../errors/errors.ts";
import type { LimitOverrides } from "../../server/limits/limit-overrides.ts";
import type { RateLimit } from "../../server/limits/rate-limiter.ts";
import { DEFAULT_LIMITS, type ServerLimits } from "../../server/server-options.ts";

/** The limit flags of `ctxkit serve` and `ctxkit serve keys add`. */
export interface LimitFlags {
  readonly rateLimit?: string;
  readonly maxBody?: string;
  readonly upstreamTimeout?: string;
}

const SIZE_UNITS: Record<string, number> = {
  "": 1,
  b: 1,
  kib: 1024,
  kb: 1000,
  mib: 1024 ** 2,
  mb: 1000 ** 2,
};

/** `--rate-limit`: `off`, or `<per second>[/<burst>[/<max wait s>]]` (burst defaults to twice the rate). */
function parseRateLimit(text: string): RateLimit | false {
  if (text === "off") return false;
  const parts = text.split("/").map(Number);
  const [perSecond, burst = 2 * (parts[0] ?? 0), waitSeconds = 5] = parts;
  const valid =
    parts.length <= 3 &&
    parts.every((part) => Number.isFinite(part)) &&
    perSecond !== undefined &&
    perSecond > 0 &&
    burst >= 1 &&
    waitSeconds >= 0;
  if (!valid)
    throw new ConfigError(
      "--rate-limit",
      `"${text}" is not a rate limit; give requests per second, optionally /burst and /seconds a request may wait ` +
        "(e.g. 200, 200/400 or 200/400/5), or off",
    );
  return { requestsPerSecond: perSecond, burst, maxWaitMs: waitSeconds * 1000 };
}

/** `--max-body`: bytes, or a number with KiB, KB, MiB or MB. */
function parseSize(text: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text.trim());
  const unit = SIZE_UNITS[match?.[2]?.toLowerCase() ?? "?"];
  const bytes = match === null || unit === undefined ? Number.NaN : Math.floor(Number(match[1]) * unit);
  if (!Number.isFinite(bytes) || bytes < 1024)
    throw new ConfigError(
      "--max-body",
      `"${text}" is not a body size of at least 1 KiB; give e.g. 4MiB or 500000`,
    );
  return bytes;
}

/** `--upstream-timeout`: seconds. */
function parseSeconds(text: string): number {
  const seconds = Number(text);
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new ConfigError("--upstream-timeout", `"${text}" is not a number of seconds; give e.g. 120`);
  return seconds * 1000;
}

/**
 * The server's limits from `ctxkit serve`'s flags, over the defaults. Each bad value is a `ConfigError` naming the
 * flag and an example (exit code 2).
 *
 * @example
 * serveLimits({ rateLimit: "100/200", maxBody: "8MiB" }); // { rateLimit: { requestsPerSecond: 100, … }, maxBodyBytes: 8388608, … }
 */
export function serveLimits(flags: LimitFlags): ServerLimits {
  return {
    ...DEFAULT_LIMITS,
    ...(flags.rateLimit !== undefined && { rateLimit: parseRateLimit(flags.rateLimit) }),
    ...(flags.maxBody !== undefined && { maxBodyBytes: parseSize(flags.maxBody) }),
    ...(flags.upstreamTimeout !== undefined && { upstreamTimeoutMs: parseSeconds(flags.upstreamTimeout) }),
  };
}

/**
 * The limits `ctxkit serve keys add` gives a key: only the flags given, each parsed and checked as `serve`'s.
 *
 * @example
 * keyLimits({ rateLimit: "5/10/1", maxBody: "64KiB" }); // { rateLimit: { requestsPerSecond: 5, burst: 10, maxWaitMs: 1000 }, maxBodyBytes: 65536 }
 */
export function keyLimits(flags: LimitFlags): LimitOverrides {
  return {
    ...(flags.rateLimit !== undefined && { rateLimit: parseRateLimit(flags.rateLimit) }),
    ...(flags.maxBody !== undefined && { maxBodyBytes: parseSize(flags.maxBody) }),
    ...(flags.upstreamTimeout !== undefined && { upstreamTimeoutMs: parseSeconds(flags.upstreamTimeout) }),
  };
}

function formatSize(bytes: number): string {
  if (bytes % 1024 ** 2 === 0) return `${bytes / 1024 ** 2}MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024}KiB`;
  return String(bytes);
}

/**
 * A key's or tenant's limits as the flags that would set them, for `ctxkit serve keys list`; empty when none.
 *
 * @example
 * describeLimits({ rateLimit: { requestsPerSecond: 5, burst: 10, maxWaitMs: 1000 }, upstreamTimeoutMs: 30000 });
 * // "--rate-limit 5/10/1 --upstream-timeout 30"
 */
export function describeLimits(limits: LimitOverrides): string {
  const { rateLimit, maxBodyBytes, upstreamTimeoutMs } = limits;
  return [
    rateLimit === undefined
      ? undefined
      : `--rate-limit ${rateLimit === false ? "off" : `${rateLimit.requestsPerSecond}/${rateLimit.burst}/${(rateLimit.maxWaitMs ?? 0) / 1000}`}`,
    maxBodyBytes === undefined ? undefined : `--max-body ${formatSize(maxBodyBytes)}`,
    upstreamTimeoutMs === undefined ? undefined : `--upstream-timeout ${upstreamTimeoutMs / 1000}`,
  ]
    .filter((part) => part !== undefined)
    .join(" ");
}
