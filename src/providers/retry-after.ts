function header(headers: Readonly<Record<string, string>>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value;
  return undefined;
}

/**
 * How long a server asked the client to wait, from `retry-after-ms`, `retry-after` (seconds or an HTTP date)
 * or, failing those, the response body (Gemini's `RetryInfo.retryDelay: "37s"`, OpenAI's "try again in 1.5s").
 * Undefined when nothing usable is given; never negative.
 *
 * @example
 * retryAfterMs({ "retry-after": "2" }); // 2000
 * retryAfterMs({ "Retry-After": "Wed, 21 Oct 2026 07:28:00 GMT" }, undefined, Date.parse("2026-10-21T07:27:30Z")); // 30000
 */
export function retryAfterMs(
  headers: Readonly<Record<string, string>> = {},
  body: string | undefined = undefined,
  now: number = Date.now(),
): number | undefined {
  const milliseconds = header(headers, "retry-after-ms");
  if (milliseconds !== undefined && Number.isFinite(Number.parseFloat(milliseconds))) {
    return Math.max(0, Number.parseFloat(milliseconds));
  }
  const retryAfter = header(headers, "retry-after")?.trim();
  if (retryAfter !== undefined && retryAfter !== "") {
    if (/^\d+(\.\d+)?$/.test(retryAfter)) return Number.parseFloat(retryAfter) * 1000;
    const date = Date.parse(retryAfter);
    if (Number.isFinite(date)) return Math.max(0, date - now);
  }
  return body === undefined ? undefined : retryAfterFromBody(body);
}

function retryAfterFromBody(body: string): number | undefined {
  const gemini = /"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"/.exec(body);
  if (gemini?.[1] !== undefined) return Number.parseFloat(gemini[1]) * 1000;
  const prose = /try again in (\d+(?:\.\d+)?)\s*(ms|s)\b/i.exec(body);
  if (prose?.[1] !== undefined)
    return Number.parseFloat(prose[1]) * (prose[2]?.toLowerCase() === "ms" ? 1 : 1000);
  return undefined;
}
