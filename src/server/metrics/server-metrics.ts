import { collectDefaultMetrics, Counter, Histogram, Registry } from "prom-client";

/** Buckets (seconds) for request, upstream and overhead times: 1 ms to 2 minutes. */
const SECONDS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/**
 * The server's metrics, in a registry of its own (prom-client), so two servers in one process never share counts.
 * Labels carry route patterns, methods, statuses and event types only: never ids, keys, tenants or content. The
 * process's own metrics (CPU, memory, event-loop lag, handles) come with them.
 *
 * @example
 * const metrics = new ServerMetrics();
 * metrics.requests.inc({ method: "GET", route: "/health", status: "200" });
 * const text = await metrics.render();
 */
export class ServerMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: "ctxkit_http_requests_total",
    help: "HTTP requests by method, route pattern and status.",
    labelNames: ["method", "route", "status"] as const,
    registers: [this.registry],
  });
  readonly requestDuration = new Histogram({
    name: "ctxkit_http_request_duration_seconds",
    help: "Time to the response headers, by route pattern.",
    labelNames: ["route"] as const,
    buckets: SECONDS,
    registers: [this.registry],
  });
  readonly upstreamRequests = new Counter({
    name: "ctxkit_upstream_requests_total",
    help: "Requests sent to the upstream model server, by response status (or error).",
    labelNames: ["status"] as const,
    registers: [this.registry],
  });
  readonly upstreamDuration = new Histogram({
    name: "ctxkit_upstream_duration_seconds",
    help: "Upstream request time, from sending to the last byte of the answer.",
    buckets: SECONDS,
    registers: [this.registry],
  });
  readonly proxyOverhead = new Histogram({
    name: "ctxkit_proxy_overhead_seconds",
    help: "Time ctxkit added to a model request: total handling time minus the upstream's time.",
    buckets: SECONDS,
    registers: [this.registry],
  });
  readonly governanceEvents = new Counter({
    name: "ctxkit_governance_events_total",
    help: "Governance events by type.",
    labelNames: ["type"] as const,
    registers: [this.registry],
  });
  readonly rateLimited = new Counter({
    name: "ctxkit_rate_limited_total",
    help: "Requests refused by the per-key rate limit.",
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** The content type of `render()`'s text (the Prometheus text exposition format). */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** Every metric in the Prometheus text exposition format. */
  render(): Promise<string> {
    return this.registry.metrics();
  }
}
