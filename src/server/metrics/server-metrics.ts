import { Counter, Histogram } from "./prometheus-metrics.ts";

/**
 * The server's metrics. Labels carry route patterns, methods, statuses and event types only: never ids, keys,
 * tenants or content.
 *
 * @example
 * const metrics = new ServerMetrics();
 * metrics.requests.inc({ method: "GET", route: "/health", status: "200" });
 * const text = metrics.render();
 */
export class ServerMetrics {
  readonly requests = new Counter(
    "ctxkit_http_requests_total",
    "HTTP requests by method, route pattern and status.",
  );
  readonly requestDuration = new Histogram(
    "ctxkit_http_request_duration_seconds",
    "Time to the response headers, by route pattern.",
  );
  readonly upstreamRequests = new Counter(
    "ctxkit_upstream_requests_total",
    "Requests sent to the upstream model server, by response status (or error).",
  );
  readonly upstreamDuration = new Histogram(
    "ctxkit_upstream_duration_seconds",
    "Upstream request time, from sending to the last byte of the answer.",
  );
  readonly proxyOverhead = new Histogram(
    "ctxkit_proxy_overhead_seconds",
    "Time ctxkit added to a model request: total handling time minus the upstream's time.",
  );
  readonly governanceEvents = new Counter("ctxkit_governance_events_total", "Governance events by type.");
  readonly rateLimited = new Counter(
    "ctxkit_rate_limited_total",
    "Requests refused by the per-key rate limit.",
  );

  /** Every metric in the Prometheus text exposition format. */
  render(): string {
    return `${[
      this.requests,
      this.requestDuration,
      this.upstreamRequests,
      this.upstreamDuration,
      this.proxyOverhead,
      this.governanceEvents,
      this.rateLimited,
    ]
      .map((metric) => metric.render())
      .join("\n")}\n`;
  }
}
