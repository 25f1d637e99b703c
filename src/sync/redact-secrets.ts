const REDACTED = "[redacted]";

const SECRET_PATTERNS: readonly RegExp[] = [
  /\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}/g, // OpenAI / Anthropic / Stripe style keys
  /\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bAIza[0-9A-Za-z_-]{35}\b/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/g, // JSON web tokens
];

const ASSIGNMENT =
  /\b(bearer|token|api[_-]?key|secret|password|passwd|authorization|cookie)(["']?\s*[:=]\s*|\s+)(["']?)[^\s"',;]+/gi;
const LONG_TOKEN = /\b[A-Za-z0-9_-]{32,}\b/g;
const SECRET_NAME = /key|token|secret|password|passwd|credential|auth/i;

/**
 * Removes what looks like a credential from `text` (typically a command's stderr before it goes into an error
 * message): known key formats, `key=value` / `Bearer …` assignments, long random-looking tokens, and the values
 * of environment variables whose names look secret.
 *
 * @example
 * redactSecrets("401: invalid x-api-key sk-ant-abcdefghijklmnopqrstuvwx"); // "401: invalid x-api-key [redacted]"
 */
export function redactSecrets(text: string, env: Readonly<Record<string, string | undefined>> = {}): string {
  let result = text;
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && value.length >= 8 && SECRET_NAME.test(name))
      result = result.replaceAll(value, REDACTED);
  }
  for (const pattern of SECRET_PATTERNS) result = result.replace(pattern, REDACTED);
  result = result.replace(
    ASSIGNMENT,
    (_match, key: string, separator: string, quote: string) => `${key}${separator}${quote}${REDACTED}`,
  );
  return result.replace(LONG_TOKEN, (token) =>
    /[0-9]/.test(token) && /[A-Za-z]/.test(token) ? REDACTED : token,
  );
}
