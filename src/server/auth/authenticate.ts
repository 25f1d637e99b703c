import type { MiddlewareHandler } from "hono";
import { HttpError } from "../http/http-error.ts";
import type { ServerEnv } from "../server-context.ts";
import { KEY_PERMISSIONS } from "./key-permissions.ts";
import type { KeyStore } from "./key-store.ts";

const UNAUTHORIZED_HEADERS = { "WWW-Authenticate": 'Bearer realm="ctxkit"' };

/**
 * The key a request presents: `Authorization: Bearer <key>`, or `X-Api-Key: <key>`.
 *
 * @example
 * presentedKey(new Headers({ authorization: "Bearer ctxk_…" })); // "ctxk_…"
 */
export function presentedKey(header: (name: string) => string | undefined): string | undefined {
  const authorization = header("authorization");
  if (authorization !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    return match?.[1];
  }
  return header("x-api-key")?.trim() || undefined;
}

/**
 * Requires a valid API key and sets the request's `tenant`, `keyId`, `keyLimits` and `keyPermissions`; 401
 * otherwise (the same answer for a missing, malformed, unknown or revoked key).
 *
 * @example
 * app.use("/v1/*", authenticate(keys));
 */
export function authenticate(keys: KeyStore): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    const key = presentedKey((name) => c.req.header(name));
    const identity = key === undefined ? undefined : await keys.verify(key);
    if (identity === undefined) {
      throw new HttpError(
        401,
        "unauthorized",
        key === undefined
          ? "send an API key as Authorization: Bearer <key> (create one with ctxkit serve keys add <tenant>)"
          : "the API key is not valid; check it or create a new one with ctxkit serve keys add <tenant>",
        UNAUTHORIZED_HEADERS,
      );
    }
    c.set("tenant", identity.tenant);
    c.set("keyId", identity.keyId);
    c.set("keyLimits", identity.limits);
    c.set("keyPermissions", identity.permissions ?? []);
    c.set("keyIsValid", async () => (await keys.verify(key!)) !== undefined);
    await next();
  };
}

/**
 * Without authentication: every request is `tenant`, with every permission (the one local user is the operator).
 *
 * @example
 * app.use("/v1/*", anonymous("local"));
 */
export function anonymous(tenant: string): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    c.set("tenant", tenant);
    c.set("keyId", undefined);
    c.set("keyLimits", undefined);
    c.set("keyPermissions", KEY_PERMISSIONS);
    c.set("keyIsValid", () => Promise.resolve(true));
    await next();
  };
}
