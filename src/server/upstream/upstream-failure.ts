import { isContextOverflowError } from "../../errors/overflow-recognition.ts";
import { retryAfterMs } from "../../providers/retry-after.ts";
import { HttpError } from "../http/http-error.ts";
import { redactSecrets } from "../../errors/redact-secrets.ts";

/** The upstream's own explanation: `error.message` of a JSON body, else the text, one line, ≤ 300 characters. */
function detailOf(body: string): string {
  let detail = body;
  try {
    const parsed = JSON.parse(body) as { error?: unknown; message?: unknown };
    const inner = parsed.error;
    const found =
      typeof inner === "string"
        ? inner
        : typeof inner === "object" && inner !== null
          ? (inner as { message?: unknown }).message
          : parsed.message;
    if (typeof found === "string") detail = found;
  } catch {
    // Not JSON: the text itself is the detail.
  }
  const line = detail.replace(/\s+/g, " ").trim();
  return line.length > 300 ? `${line.slice(0, 297)}...` : line || "(empty body)";
}

/**
 * The HTTP error a failed upstream answer becomes: overflow → 400 `context_overflow`; 401/403 → 502
 * `upstream_auth_failed` (without the upstream's text, which may quote the server's key); 429 → 429 with the
 * upstream's `Retry-After`; 408/504 → 504; 5xx → 502 `upstream_error`; other 4xx → 400 `upstream_rejected`.
 * Details are redacted of anything that looks like a key.
 *
 * @example
 * if (!response.ok) throw upstreamFailure(response.status, headersOf(response), await response.text(), [apiKey]);
 */
export function upstreamFailure(
  status: number,
  headers: Readonly<Record<string, string>>,
  body: string,
  secrets: readonly (string | undefined)[] = [],
): HttpError {
  const detail = redactSecrets(detailOf(body), { secrets });
  if (isContextOverflowError({ status, message: body })) {
    return new HttpError(
      400,
      "context_overflow",
      `the upstream model says the request does not fit its context window (${detail}); ` +
        "clear or compact the session, shorten the input, or configure the model's real window",
    );
  }
  if (status === 401 || status === 403) {
    return new HttpError(
      502,
      "upstream_auth_failed",
      `the upstream model server refused this server's credentials (${status}); the server operator must check its upstream key`,
    );
  }
  if (status === 429) {
    const wait = retryAfterMs(headers, body);
    return new HttpError(
      429,
      "rate_limited",
      `the upstream model server is rate limiting (${detail}); wait and retry`,
      wait === undefined ? {} : { "Retry-After": String(Math.max(1, Math.ceil(wait / 1000))) },
    );
  }
  if (status === 408 || status === 504) {
    return new HttpError(
      504,
      "upstream_timeout",
      `the upstream model server timed out (${status}): ${detail}`,
    );
  }
  if (status >= 500) {
    return new HttpError(
      502,
      "upstream_error",
      `the upstream model server failed (${status}): ${detail}; retry later`,
    );
  }
  return new HttpError(
    400,
    "upstream_rejected",
    `the upstream model server rejected the request (${status}): ${detail}`,
  );
}

/**
 * The failure a 2xx chat completion reports instead of a completion, or undefined for a real one. Some servers
 * (OpenRouter among them) answer 200 with a top-level `error`; its `code` (or `status`), when an HTTP error
 * status, is mapped as `upstreamFailure` maps that status, else it is a 502 `upstream_error`. A body with no
 * `choices` is a 502 `upstream_error` too: there is no reply to store.
 *
 * @example
 * const failure = completionFailure(JSON.parse(text), [upstream.apiKey]);
 * if (failure !== undefined) throw failure;
 */
export function completionFailure(
  answer: unknown,
  secrets: readonly (string | undefined)[] = [],
): HttpError | undefined {
  const body =
    typeof answer === "object" && answer !== null && !Array.isArray(answer)
      ? (answer as Record<string, unknown>)
      : {};
  const error = body["error"];
  if (error !== undefined && error !== null) {
    const fields = typeof error === "object" ? (error as Record<string, unknown>) : {};
    const status = [fields["code"], fields["status"]].find(
      (value): value is number => typeof value === "number" && value >= 400 && value <= 599,
    );
    const text = JSON.stringify({ error });
    if (status !== undefined) return upstreamFailure(status, {}, text, secrets);
    return new HttpError(
      502,
      "upstream_error",
      `the upstream model server answered with an error instead of a completion: ` +
        `${redactSecrets(detailOf(text), { secrets })}; retry later`,
    );
  }
  if (!Array.isArray(body["choices"]) || body["choices"].length === 0) {
    return new HttpError(
      502,
      "upstream_error",
      "the upstream model server answered without any choice (no completion to return); retry, or check that " +
        "the upstream speaks OpenAI's chat completions",
    );
  }
  return undefined;
}
