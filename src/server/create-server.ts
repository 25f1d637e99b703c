import { Hono } from "hono";
import { ConfigError } from "../errors/errors.ts";
import { systemClock } from "../model/ids.ts";
import { anonymous, authenticate } from "./auth/authenticate.ts";
import { requirePermission } from "./auth/require-permission.ts";
import { errorBody } from "./http/error-response.ts";
import { loopbackHostGuard } from "./http/loopback-host-guard.ts";
import { observeRequests } from "./http/observe-requests.ts";
import { renderError } from "./http/render-error.ts";
import { requireJsonWrites } from "./http/require-json-writes.ts";
import { securityHeaders } from "./http/security-headers.ts";
import { applyRequestLimits } from "./limits/apply-request-limits.ts";
import { bodySizeLimit } from "./limits/body-size-limit.ts";
import { rateLimit } from "./limits/rate-limit.ts";
import { parseTenantLimits } from "./limits/tenant-limits.ts";
import { StatelessGovernance } from "./proxy/stateless-governance.ts";
import { ServerMetrics } from "./metrics/server-metrics.ts";
import { registerChatCompletionsRoute } from "./routes/chat-completions-route.ts";
import { registerResponsesRoute } from "./routes/responses-route.ts";
import { registerMessagesRoutes } from "./routes/messages-route.ts";
import { registerInspectionRoutes } from "./routes/inspection-routes.ts";
import { registerInspectorRoutes } from "./routes/inspector-routes.ts";
import { registerMemoryRoutes } from "./routes/memory-routes.ts";
import { registerSessionDataRoutes } from "./routes/session-data-routes.ts";
import { registerSessionRoutes } from "./routes/session-routes.ts";
import { defaultWebRoot, registerStaticRoutes } from "./routes/static-routes.ts";
import { registerStatusRoutes } from "./routes/status-routes.ts";
import { registerTurnRoutes } from "./routes/turn-routes.ts";
import type { ServerContext, ServerEnv } from "./server-context.ts";
import { DEFAULT_LIMITS, LOCAL_TENANT, type ServerOptions } from "./server-options.ts";
import { EventHub } from "./tenancy/event-hub.ts";
import { SessionDirectory } from "./tenancy/session-directory.ts";
import { TenantEngines } from "./tenancy/tenant-engines.ts";
import { guardStreams } from "./http/guard-streams.ts";
import { publicSessionId } from "./tenancy/tenant-session-id.ts";
import { ReplayGate } from "./routes/replay-gate.ts";

/**
 * Builds the server as a Hono app (serve it with `startServer`, or call `app.request()` in tests): sessions,
 * turns over SSE, inspection, memory, metrics and the OpenAI-compatible proxy, behind API-key auth with
 * per-tenant isolation, body and rate limits (server-wide, per tenant and per key).
 *
 * @example
 * const keys = new MemoryKeyStore();
 * const app = createServer({ store: new MemorySessionStore(), keys, upstream: { baseURL: "http://127.0.0.1:8080/v1" } });
 * const response = await app.request("/health");
 */
export function createServer(options: ServerOptions): Hono<ServerEnv> {
  const auth = options.auth ?? true;
  if (auth && options.keys === undefined) {
    throw new ConfigError(
      "server.auth",
      "authentication is on but no key store was given; pass keys, or auth: false",
    );
  }
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const tenantLimits = parseTenantLimits(options.tenantLimits ?? {}, "server.tenantLimits", "in the options");
  const metrics = new ServerMetrics();
  const hub = new EventHub();
  const log = options.log ?? (() => undefined);
  const clock = options.clock ?? systemClock;
  const context: ServerContext = {
    store: options.store,
    memory: options.memory,
    directory: new SessionDirectory(options.store, {
      clock,
      ...(options.unownedSessionsTenant !== undefined && {
        unownedSessionsTenant: options.unownedSessionsTenant,
      }),
    }),
    engines: new TenantEngines({
      store: options.store,
      ...(options.engine !== undefined && { engine: options.engine }),
      maxLiveSessions: limits.maxLiveSessions,
      ...(options.turnLocks !== undefined && { turnLocks: options.turnLocks }),
      ...(options.memoryInContext === true &&
        options.memory !== undefined && { contextMemory: options.memory }),
      onEvent: (tenant, sessionId, event) => {
        metrics.governanceEvents.inc({ type: event.type });
        hub.publish(tenant, { type: "governance", sessionId: publicSessionId(tenant, sessionId), event });
      },
    }),
    hub,
    stateless: new StatelessGovernance(),
    metrics,
    upstream: options.upstream,
    upstreamUnavailable: options.upstreamUnavailable,
    anthropicUpstream: options.anthropicUpstream,
    limits,
    replays: new ReplayGate(),
    auth,
    log,
    clock,
  };

  const app = new Hono<ServerEnv>();
  app.onError(renderError(log));
  app.notFound((c) =>
    c.json(
      errorBody({
        status: 404,
        code: "not_found",
        message: `no route ${c.req.method} ${c.req.path}`,
        headers: {},
      }),
      404,
    ),
  );
  app.use("*", observeRequests(metrics, log));
  app.use("*", securityHeaders());
  if (!auth) app.use("*", loopbackHostGuard());
  // The server-wide body limit comes before authentication: nothing larger is read whoever sends it.
  app.use("*", bodySizeLimit(limits.maxBodyBytes));
  const identify = auth ? authenticate(options.keys!) : anonymous(LOCAL_TENANT);
  app.use("/v1/*", identify);
  app.use("/v1/*", guardStreams(auth));
  // Metrics count every tenant's traffic: an operator's endpoint, for keys with the metrics permission only.
  if (options.publicMetrics !== true) {
    app.use(
      "/metrics",
      identify,
      requirePermission(
        "metrics",
        "GET /metrics (counts of every tenant's traffic)",
        "create an operator's key with: ctxkit serve keys add <name> --metrics (or, on a private network, start the server with --public-metrics)",
      ),
    );
  }
  app.use("/v1/*", applyRequestLimits(limits, tenantLimits));
  app.use(
    "/v1/*",
    rateLimit(() => metrics.rateLimited.inc()),
  );
  app.use("/v1/*", requireJsonWrites());

  registerStatusRoutes(app, context);
  registerSessionRoutes(app, context);
  registerSessionDataRoutes(app, context);
  registerInspectionRoutes(app, context);
  registerInspectorRoutes(app, context);
  registerTurnRoutes(app, context);
  registerMemoryRoutes(app, context);
  registerChatCompletionsRoute(app, context);
  registerResponsesRoute(app, context);
  registerMessagesRoutes(app, context);
  const webRoot = options.webRoot === undefined ? defaultWebRoot() : options.webRoot || undefined;
  if (webRoot !== undefined) registerStaticRoutes(app, webRoot);
  return app;
}
