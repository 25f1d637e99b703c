import { CtxkitError } from "../errors/ctxkit-error.ts";
import type { ProviderError } from "../errors/provider-errors.ts";
import {
  classifyProviderError,
  isRetryableProviderError,
  type ProviderErrorContext,
} from "./classify-provider-error.ts";

/** One scheduled retry, reported before waiting. */
export interface RetryNotice {
  /** 1 for the first retry. */
  readonly retry: number;
  readonly delayMs: number;
  readonly error: ProviderError;
}

/** How `withRetries` retries. */
export interface RetryOptions {
  /** Retries after the first attempt (so at most maxRetries + 1 calls). Default 2. */
  maxRetries?: number;
  /** First backoff delay; doubles with each retry, with jitter. Default 1000. */
  baseDelayMs?: number;
  /** Cap on one backoff delay. Default 30 000. */
  maxDelayMs?: number;
  /** A server asking to wait longer than this is not retried (the error is thrown). Default 60 000. */
  maxRetryAfterMs?: number;
  /** Stops waiting and retrying; the abort reason is thrown. */
  signal?: AbortSignal;
  /** Called before each wait, e.g. to emit an event or a log line. */
  onRetry?: (notice: RetryNotice) => void;
  /** Passed to the classifier for more specific messages. */
  context?: ProviderErrorContext;
  /** Random source in [0, 1) for the jitter. Default Math.random. */
  random?: () => number;
}

function wait(milliseconds: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, milliseconds);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Calls `operation` and retries it while it fails with a retryable provider error (rate limit, network,
 * timeout, 5xx): exponential backoff with jitter, or the server's `retry-after` when it gave one. Overflow and
 * auth errors are thrown at once. Failures are thrown as classified ProviderErrors (other ctxkit errors
 * unchanged); an abort throws the signal's reason.
 *
 * @example
 * const result = await withRetries(
 *   (attempt) => generateText({ model, prompt, maxRetries: 0 }),
 *   { maxRetries: 3, signal },
 * );
 */
export async function withRetries<Result>(
  operation: (attempt: number) => Promise<Result>,
  options: RetryOptions = {},
): Promise<Result> {
  const maxRetries = Math.max(0, Math.floor(options.maxRetries ?? 2));
  const baseDelayMs = options.baseDelayMs ?? 1_000;
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
  const random = options.random ?? Math.random;
  for (let attempt = 0; ; attempt += 1) {
    options.signal?.throwIfAborted();
    try {
      return await operation(attempt);
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (CtxkitError.isInstance(error) && !("kind" in error)) throw error;
      const failure = classifyProviderError(error, options.context);
      const tooLong = failure.retryAfterMs !== undefined && failure.retryAfterMs > maxRetryAfterMs;
      if (attempt >= maxRetries || tooLong || !isRetryableProviderError(failure)) throw failure;
      const backoff = Math.min(maxDelayMs, baseDelayMs * 2 ** attempt);
      // Equal jitter: at least half the backoff, so retries spread out without collapsing to zero.
      const delayMs = failure.retryAfterMs ?? backoff / 2 + (random() * backoff) / 2;
      options.onRetry?.({ retry: attempt + 1, delayMs, error: failure });
      await wait(delayMs, options.signal);
    }
  }
}
