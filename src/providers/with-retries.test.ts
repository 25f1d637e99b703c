import { APICallError } from "@ai-sdk/provider";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../errors/errors.ts";
import { ProviderError } from "../errors/provider-errors.ts";
import { withRetries, type RetryNotice } from "./with-retries.ts";

function statusError(
  statusCode: number,
  headers: Record<string, string> = {},
  message = "failed",
): APICallError {
  return new APICallError({
    message,
    url: "https://api.openai.com/v1/responses",
    requestBodyValues: {},
    statusCode,
    responseHeaders: headers,
    responseBody: JSON.stringify({ error: { message } }),
  });
}

const refused = () =>
  Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), {
    code: "ECONNREFUSED",
    address: "127.0.0.1",
    port: 1,
  });

/** An operation that throws the given errors in order, then succeeds; records each attempt number. */
function scripted(failures: Error[]) {
  const attempts: number[] = [];
  const operation = async (attempt: number) => {
    attempts.push(attempt);
    const failure = failures[attempts.length - 1];
    if (failure !== undefined) throw failure;
    return "ok";
  };
  return { attempts, operation };
}

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => new Error("expected a failure"),
    (reason: unknown) => reason,
  );
}

describe("withRetries", () => {
  it("returns at once when the first attempt succeeds", async () => {
    const { attempts, operation } = scripted([]);
    expect(await withRetries(operation, { baseDelayMs: 1 })).toBe("ok");
    expect(attempts).toEqual([0]);
  });

  it("retries network errors, timeouts and 5xx until success", async () => {
    const { attempts, operation } = scripted([refused(), statusError(503), statusError(408)]);
    const notices: RetryNotice[] = [];
    const result = await withRetries(operation, {
      maxRetries: 3,
      baseDelayMs: 1,
      onRetry: (notice) => notices.push(notice),
    });
    expect(result).toBe("ok");
    expect(attempts).toEqual([0, 1, 2, 3]);
    expect(notices.map((notice) => [notice.retry, notice.error.kind])).toEqual([
      [1, "network"],
      [2, "other"],
      [3, "timeout"],
    ]);
  });

  it("gives up after maxRetries and throws the classified last failure", async () => {
    const { attempts, operation } = scripted([
      statusError(500),
      statusError(502),
      statusError(503),
      statusError(504),
    ]);
    const failure = await failureOf(withRetries(operation, { maxRetries: 2, baseDelayMs: 1 }));
    expect(attempts).toEqual([0, 1, 2]);
    expect(failure).toBeInstanceOf(ProviderError);
    expect((failure as ProviderError).status).toBe(503);
  });

  it.each([
    ["auth (401)", statusError(401, {}, "Incorrect API key provided")],
    ["overflow", statusError(400, {}, "This model's maximum context length is 8192 tokens.")],
    ["a plain 400", statusError(400, {}, "invalid tool schema")],
  ])("never retries %s", async (_label, error) => {
    const { attempts, operation } = scripted([error, error]);
    const failure = await failureOf(withRetries(operation, { maxRetries: 5, baseDelayMs: 1 }));
    expect(attempts).toEqual([0]);
    expect(failure).toBeInstanceOf(ProviderError);
  });

  it("rethrows other ctxkit errors unchanged and untried", async () => {
    const config = new ConfigError("model", "no model configured");
    const { attempts, operation } = scripted([config]);
    expect(await failureOf(withRetries(operation, { baseDelayMs: 1 }))).toBe(config);
    expect(attempts).toEqual([0]);
  });

  it("waits what retry-after says instead of the backoff", async () => {
    const { operation } = scripted([
      statusError(429, { "retry-after": "0.005" }),
      statusError(429, { "retry-after-ms": "3" }),
    ]);
    const delays: number[] = [];
    await withRetries(operation, {
      maxRetries: 2,
      baseDelayMs: 10_000,
      onRetry: (notice) => delays.push(notice.delayMs),
    });
    expect(delays).toEqual([5, 3]);
  });

  it("does not retry when the server asks to wait longer than maxRetryAfterMs", async () => {
    const { attempts, operation } = scripted([statusError(429, { "retry-after": "3600" })]);
    const failure = await failureOf(withRetries(operation, { maxRetries: 3, baseDelayMs: 1 }));
    expect(attempts).toEqual([0]);
    expect((failure as ProviderError).retryAfterMs).toBe(3_600_000);
  });

  it("backs off exponentially with jitter within [half, full] of the capped delay", async () => {
    const failures = Array.from({ length: 5 }, () => refused());
    const { operation } = scripted(failures);
    const delays: number[] = [];
    const randoms = [0, 0.999, 0.5, 0, 0.25];
    await withRetries(operation, {
      maxRetries: 5,
      baseDelayMs: 1,
      maxDelayMs: 8,
      random: () => randoms.shift() ?? 0,
      onRetry: (notice) => delays.push(notice.delayMs),
    });
    expect(delays.map((delay) => Math.round(delay * 1000) / 1000)).toEqual([0.5, 1.999, 3, 4, 5]);
  });

  it("stops waiting when aborted and throws the abort reason", async () => {
    const controller = new AbortController();
    const { attempts, operation } = scripted([refused(), refused(), refused()]);
    const pending = withRetries(operation, {
      maxRetries: 5,
      baseDelayMs: 60_000,
      signal: controller.signal,
      onRetry: () => controller.abort(new Error("user pressed ctrl-c")),
    });
    const failure = await failureOf(pending);
    expect((failure as Error).message).toBe("user pressed ctrl-c");
    expect(attempts).toEqual([0]);
  });

  it("does not call the operation when the signal is already aborted", async () => {
    const { attempts, operation } = scripted([]);
    const failure = await failureOf(withRetries(operation, { signal: AbortSignal.abort(new Error("gone")) }));
    expect((failure as Error).message).toBe("gone");
    expect(attempts).toEqual([]);
  });
});
