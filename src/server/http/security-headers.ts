import type { MiddlewareHandler } from "hono";

/** The inspector's Content-Security-Policy: only its own scripts, styles and API; no framing, no forms. */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * Sets the security headers on every response: the strict CSP, `nosniff`, `no-referrer`, and `no-store` on
 * API answers (they hold conversation data).
 *
 * @example
 * app.use("*", securityHeaders());
 */
export function securityHeaders(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    c.res.headers.set("Content-Security-Policy", CONTENT_SECURITY_POLICY);
    c.res.headers.set("X-Content-Type-Options", "nosniff");
    c.res.headers.set("Referrer-Policy", "no-referrer");
    c.res.headers.set("X-Frame-Options", "DENY");
    if (c.req.path.startsWith("/v1/") && !c.res.headers.has("Cache-Control")) {
      c.res.headers.set("Cache-Control", "no-store");
    }
  };
}
