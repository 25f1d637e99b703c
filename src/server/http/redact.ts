const REDACTED = "[redacted]";

const RULES: readonly (readonly [RegExp, string])[] = [
  [/\bctxk_[0-9a-f]{12}_[A-Za-z0-9_-]{10,}/g, REDACTED],
  [/\b(?:sk|pk|rk)-[A-Za-z0-9_*.-]{8,}/g, REDACTED],
  [/\b(bearer)\s+[^\s"',;]+/gi, `$1 ${REDACTED}`],
  [/\b(authorization|x-api-key|api[_-]?key)(["']?\s*[:=]\s*["']?)[^\s"',;]+/gi, `$1$2${REDACTED}`],
];

/**
 * Removes secrets from a text that may reach a log line or a client: the given secret values, ctxkit keys,
 * provider keys (`sk-…`, even partly masked), `Bearer …` and `api_key=…` / `Authorization: …` values.
 *
 * @example
 * redact("Incorrect API key provided: sk-abc***xyz"); // "Incorrect API key provided: [redacted]"
 */
export function redact(text: string, secrets: readonly (string | undefined)[] = []): string {
  let result = text;
  for (const secret of secrets)
    if (secret !== undefined && secret.length >= 6) result = result.replaceAll(secret, REDACTED);
  for (const [pattern, replacement] of RULES) result = result.replace(pattern, replacement);
  return result;
}
