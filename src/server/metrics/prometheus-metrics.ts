/** Label values of one series. */
export type Labels = Readonly<Record<string, string>>;

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

function labelText(labels: Labels): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return "";
  return `{${entries.map(([key, value]) => `${key}="${escapeLabel(value)}"`).join(",")}}`;
}

function seriesKey(labels: Labels): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * A Prometheus counter with labels.
 *
 * @example
 * const requests = new Counter("ctxkit_http_requests_total", "HTTP requests");
 * requests.inc({ method: "GET", route: "/health", status: "200" });
 */
export class Counter {
  readonly name: string;
  readonly help: string;
  readonly #series = new Map<string, { labels: Labels; value: number }>();

  constructor(name: string, help: string) {
    this.name = name;
    this.help = help;
  }

  inc(labels: Labels = {}, amount = 1): void {
    const key = seriesKey(labels);
    const series = this.#series.get(key) ?? { labels, value: 0 };
    series.value += amount;
    this.#series.set(key, series);
  }

  /** The value of one series (0 when it never moved). */
  value(labels: Labels = {}): number {
    return this.#series.get(seriesKey(labels))?.value ?? 0;
  }

  /** The counter in the text exposition format. */
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const { labels, value } of this.#series.values())
      lines.push(`${this.name}${labelText(labels)} ${value}`);
    return lines.join("\n");
  }
}

/** Latency buckets in seconds, from 1 ms to 2 minutes. */
export const LATENCY_BUCKETS: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120,
];

/**
 * A Prometheus histogram with labels.
 *
 * @example
 * const latency = new Histogram("ctxkit_http_request_duration_seconds", "Request latency", LATENCY_BUCKETS);
 * latency.observe({ route: "/v1/chat/completions" }, 0.042);
 */
export class Histogram {
  readonly name: string;
  readonly help: string;
  readonly buckets: readonly number[];
  readonly #series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();

  constructor(name: string, help: string, buckets: readonly number[] = LATENCY_BUCKETS) {
    this.name = name;
    this.help = help;
    this.buckets = [...buckets].sort((a, b) => a - b);
  }

  observe(labels: Labels, value: number): void {
    const key = seriesKey(labels);
    const series = this.#series.get(key) ?? { labels, counts: this.buckets.map(() => 0), sum: 0, count: 0 };
    this.buckets.forEach((bound, index) => {
      if (value <= bound) series.counts[index]!++;
    });
    series.sum += value;
    series.count++;
    this.#series.set(key, series);
  }

  /** How many observations one series has. */
  count(labels: Labels = {}): number {
    return this.#series.get(seriesKey(labels))?.count ?? 0;
  }

  /** The histogram in the text exposition format (cumulative buckets, `+Inf`, sum and count). */
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const { labels, counts, sum, count } of this.#series.values()) {
      this.buckets.forEach((bound, index) => {
        lines.push(`${this.name}_bucket${labelText({ ...labels, le: String(bound) })} ${counts[index]}`);
      });
      lines.push(`${this.name}_bucket${labelText({ ...labels, le: "+Inf" })} ${count}`);
      lines.push(`${this.name}_sum${labelText(labels)} ${sum}`);
      lines.push(`${this.name}_count${labelText(labels)} ${count}`);
    }
    return lines.join("\n");
  }
}
