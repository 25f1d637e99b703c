import type { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import packageJson from "../../../package.json" with { type: "json" };
import type { ServerContext, ServerEnv } from "../server-context.ts";
import type { HubEvent } from "../tenancy/event-hub.ts";

/** Seconds between keep-alive comments on a live event stream. */
const KEEP_ALIVE_MS = 15_000;

/**
 * `GET /health` (no key needed), `GET /metrics` (Prometheus text), `GET /v1/me` (who the key is) and
 * `GET /v1/events` (the tenant's live events as Server-Sent Events).
 *
 * @example
 * registerStatusRoutes(app, context);
 */
export function registerStatusRoutes(app: Hono<ServerEnv>, context: ServerContext): void {
  app.get("/health", (c) => c.json({ status: "ok", version: packageJson.version, auth: context.auth }));

  app.get("/metrics", (c) =>
    c.body(context.metrics.render(), 200, { "Content-Type": "text/plain; version=0.0.4; charset=utf-8" }),
  );

  app.get("/v1/me", (c) => c.json({ tenant: c.get("tenant"), auth: context.auth }));

  app.get("/v1/events", (c) => {
    const tenant = c.get("tenant");
    return streamSSE(c, async (stream) => {
      const queue: HubEvent[] = [];
      let wake: (() => void) | undefined;
      const unsubscribe = context.hub.subscribe(tenant, (event) => {
        queue.push(event);
        wake?.();
      });
      stream.onAbort(() => wake?.());
      try {
        while (!stream.aborted) {
          const event = queue.shift();
          if (event !== undefined) {
            const { type, ...data } = event;
            await stream.writeSSE({ event: type, data: JSON.stringify(data) });
            continue;
          }
          const outcome = await new Promise<"timeout" | "event">((resolve) => {
            const timer = setTimeout(() => resolve("timeout"), KEEP_ALIVE_MS);
            wake = () => {
              clearTimeout(timer);
              resolve("event");
            };
          });
          wake = undefined;
          if (outcome === "timeout") await stream.write(": keep-alive\n\n");
        }
      } finally {
        unsubscribe();
      }
    });
  });
}
