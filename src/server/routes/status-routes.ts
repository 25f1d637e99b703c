import type { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import packageJson from "../../../package.json" with { type: "json" };
import type { ServerContext, ServerEnv } from "../server-context.ts";
import type { HubEvent } from "../tenancy/event-hub.ts";
import { StoreWriteProbe } from "../health/store-write-probe.ts";
import { KEY_RECHECK_MS } from "../http/guard-streams.ts";

/** Seconds between keep-alive comments on a live event stream. */
const KEEP_ALIVE_MS = 15_000;

/** How long `GET /ready` waits for the store before it answers 503. */
const READY_TIMEOUT_MS = 2_000;

/**
 * `GET /health` (no key needed: the process is up), `GET /ready` (no key needed: the store can write — checked by
 * writing; what a load balancer should route on), `GET /metrics` (Prometheus text of every tenant's traffic: `createServer` lets only
 * keys with the `metrics` permission reach it, unless `publicMetrics`), `GET /v1/me` (who the key is) and
 * `GET /v1/events` (the tenant's live events as Server-Sent Events).
 *
 * @example
 * registerStatusRoutes(app, context);
 */
export function registerStatusRoutes(app: Hono<ServerEnv>, context: ServerContext): void {
  app.get("/health", (c) => c.json({ status: "ok", version: packageJson.version, auth: context.auth }));

  const writes = new StoreWriteProbe(context.store);
  app.get("/ready", async (c) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), READY_TIMEOUT_MS);
    });
    // A write, not a read: a full disk or a damaged file still answers reads.
    const outcome = await Promise.race([writes.check(), timeout]);
    clearTimeout(timer);
    return outcome !== "timeout" && outcome.ok
      ? c.json({ status: "ready" })
      : c.json(
          {
            status: "unavailable",
            reason: outcome === "timeout" ? "the store did not answer" : outcome.reason,
          },
          503,
        );
  });

  app.get("/metrics", async (c) =>
    c.body(await context.metrics.render(), 200, { "Content-Type": context.metrics.contentType }),
  );

  app.get("/v1/me", (c) => c.json({ tenant: c.get("tenant"), auth: context.auth }));

  app.get("/v1/events", (c) => {
    const tenant = c.get("tenant");
    const keyIsValid = c.get("keyIsValid");
    let checkedAt = performance.now();
    // The stream outlives the request's key check: a key revoked since ends it before its next event (and, idle,
    // within a second: `guardStreams`).
    const stillValid = async () => {
      if (performance.now() - checkedAt < KEY_RECHECK_MS) return true;
      checkedAt = performance.now();
      // A key store that cannot answer ends the stream too (the client reconnects and is checked afresh).
      return keyIsValid().catch(() => false);
    };
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
          if (!(await stillValid())) break;
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
