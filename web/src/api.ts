/** The inspector's API client: same-origin `fetch`, the API key (when the server asks for one) from sessionStorage. */

const KEY_ITEM = "ctxkit.apiKey";

/** The server refused the key (or there is none): the reader must enter one. */
export class AuthRequired extends Error {
  constructor(message = "this server requires an API key") {
    super(message);
    this.name = "AuthRequired";
  }
}

/** An error answer of the API, with its code and message. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
  }
}

/**
 * The API key kept for this tab (sessionStorage: gone when the tab closes, never sent to another origin).
 *
 * @example
 * const key = storedKey();
 */
export function storedKey(): string | undefined {
  return sessionStorage.getItem(KEY_ITEM) ?? undefined;
}

/**
 * Keeps (or, with undefined, forgets) the API key for this tab.
 *
 * @example
 * storeKey("ctxk_…");
 */
export function storeKey(key: string | undefined): void {
  if (key === undefined) sessionStorage.removeItem(KEY_ITEM);
  else sessionStorage.setItem(KEY_ITEM, key);
}

async function errorOf(response: Response): Promise<ApiError> {
  try {
    const body = (await response.json()) as { error?: { code?: string; message?: string } };
    return new ApiError(
      response.status,
      body.error?.code ?? "error",
      body.error?.message ?? `HTTP ${response.status}`,
    );
  } catch {
    return new ApiError(response.status, "error", `HTTP ${response.status}`);
  }
}

/**
 * GETs a JSON answer of the API with the stored key; 401 throws `AuthRequired`, other errors `ApiError`.
 *
 * @example
 * const { sessions } = await getJson<SessionList>("/v1/sessions");
 */
export async function getJson<T>(path: string): Promise<T> {
  const key = storedKey();
  const response = await fetch(path, {
    headers: key === undefined ? {} : { Authorization: `Bearer ${key}` },
    credentials: "omit",
  });
  if (response.status === 401) throw new AuthRequired();
  if (!response.ok) throw await errorOf(response);
  return (await response.json()) as T;
}

/**
 * GETs a blob's text (offloaded outputs kept in the store) with the stored key.
 *
 * @example
 * const text = await getText(`/v1/sessions/${id}/blobs/${encodeURIComponent(ref)}`);
 */
export async function getText(path: string): Promise<string> {
  const key = storedKey();
  const response = await fetch(path, {
    headers: key === undefined ? {} : { Authorization: `Bearer ${key}` },
    credentials: "omit",
  });
  if (response.status === 401) throw new AuthRequired();
  if (!response.ok) throw await errorOf(response);
  return response.text();
}

/**
 * The path segment of an id, escaped.
 *
 * @example
 * `/v1/sessions/${segment(id)}`
 */
export function segment(value: string): string {
  return encodeURIComponent(value);
}
