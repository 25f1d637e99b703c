/**
 * The one place secrets are taken out of text that may reach a person, a log or a client: provider error
 * messages (library), what the CLI prints, the server's logs and error bodies, and a command's stderr (sync).
 * No dependencies, so every layer can use it.
 */

const REDACTED = "[redacted]";

/** Key formats, matched wherever they stand (partly masked keys such as `sk-abc***xyz` included). */
const KEY_PATTERNS: readonly RegExp[] = [
  /\bctxk_[0-9a-f]{12}_[A-Za-z0-9_-]{10,}/g, // ctxkit server keys
  /\b(?:sk|pk|rk)-[A-Za-z0-9_*.-]{8,}/g, // OpenAI, Anthropic (sk-ant-…), OpenRouter (sk-or-…), Stripe
  /\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bAIza[0-9A-Za-z_-]{20,}/g, // Google (Gemini) keys
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/g, // JSON web tokens
];

/** `Bearer …` / `Basic …` credentials. */
const SCHEME_CREDENTIAL = /\b(bearer|basic)\s+(?!\[redacted\])[^\s"',;]+/gi;
const SECRET_NAMES =
  "token|access[_-]?token|api[_-]?key|x-api-key|x-goog-api-key|secret|password|passwd|authorization|cookie";
/** `name: value` / `name=value` where the name says it is a secret. */
const ASSIGNMENT = new RegExp(`\\b(${SECRET_NAMES})(["']?\\s*[:=]\\s*)(["']?)([^\\s"',;&]+)`, "gi");
/** `password hunter2`: only for unknown text, where prose such as "token budget" is not expected. */
const LOOSE_ASSIGNMENT = new RegExp(`\\b(${SECRET_NAMES})(\\s+)(["']?)([^\\s"',;&]+)`, "gi");
/** `?key=…` and friends in URLs (Gemini takes its key as a query parameter). */
const QUERY_SECRET = /([?&;](?:key|api[_-]?key|access[_-]?token|token|sig|signature|secret)=)[^&\s"'#]+/gi;
/** The password of `scheme://user:password@host`. */
const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@]*:)[^\s/@]+@/gi;
const LONG_TOKEN = /\b[A-Za-z0-9_-]{32,}\b/g;
const SECRET_NAME = /key|token|secret|password|passwd|credential|auth/i;

function replaceValue(match: string, name: string, separator: string, quote: string, value: string): string {
  // `Authorization: Bearer [redacted]` is already done; the scheme word is not the secret.
  if (value.startsWith(REDACTED) || /^(bearer|basic)$/i.test(value)) return match;
  return `${name}${separator}${quote}${REDACTED}`;
}

/** What else `redactSecrets` should take out. */
export interface RedactOptions {
  /** Exact values to remove wherever they appear (the key a call used, whatever its shape). */
  readonly secrets?: readonly (string | undefined)[];
  /** Environment: the values of variables whose names look secret (`…KEY`, `…TOKEN`, …) are removed. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Also remove long random-looking tokens (32+ letters and digits). For text nothing is known about, such as a
   * command's stderr; it would also hide hashes and ids, so it is off by default.
   */
  readonly unknownTokens?: boolean;
}

/**
 * Removes what looks like a credential from `text`: the given values, the values of secret-looking environment
 * variables, known key formats (`sk-…`, `sk-ant-…`, `AIza…`, `ctxk_…`, GitHub, AWS, Slack, JWT), `Bearer …` and
 * `api_key=…` / `Authorization: …` assignments, `?key=…` URL parameters and URL passwords.
 *
 * @example
 * redactSecrets("Incorrect API key provided: sk-abc***wxyz"); // "Incorrect API key provided: [redacted]"
 * redactSecrets("GET https://host/v1?key=AIzaSyA-123"); // "GET https://host/v1?key=[redacted]"
 * redactSecrets("rejected key my-own-key-77", { secrets: ["my-own-key-77"] }); // "rejected key [redacted]"
 */
export function redactSecrets(text: string, options: RedactOptions = {}): string {
  let result = text;
  const values = [
    ...(options.secrets ?? []),
    ...Object.entries(options.env ?? {})
      .filter(([name, value]) => value !== undefined && value.length >= 8 && SECRET_NAME.test(name))
      .map(([, value]) => value),
  ];
  // Longest first, so a key that contains another secret is removed whole.
  for (const value of values.sort((a, b) => (b?.length ?? 0) - (a?.length ?? 0))) {
    if (value !== undefined && value.length >= 6) result = result.replaceAll(value, REDACTED);
  }
  for (const pattern of KEY_PATTERNS) result = result.replace(pattern, REDACTED);
  result = result
    .replace(QUERY_SECRET, `$1${REDACTED}`)
    .replace(URL_PASSWORD, `$1${REDACTED}@`)
    .replace(SCHEME_CREDENTIAL, `$1 ${REDACTED}`)
    .replace(ASSIGNMENT, replaceValue);
  if (options.unknownTokens !== true) return result;
  return result
    .replace(LOOSE_ASSIGNMENT, replaceValue)
    .replace(LONG_TOKEN, (token) => (/[0-9]/.test(token) && /[A-Za-z]/.test(token) ? REDACTED : token));
}
