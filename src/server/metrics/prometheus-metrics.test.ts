import { describe, expect, it } from "vitest";
import { Counter, Histogram } from "./prometheus-metrics.ts";

describe("Prometheus metrics", () => {
  it("renders counters by label set, escaping label values", () => {
    const counter = new Counter("x_total", "Things.");
    counter.inc({ route: "/a", status: "200" });
    counter.inc({ status: "200", route: "/a" }, 2);
    counter.inc({ route: 'we"ird\n' });
    expect(counter.value({ route: "/a", status: "200" })).toBe(3);
    expect(counter.render()).toBe(
      [
        "# HELP x_total Things.",
        "# TYPE x_total counter",
        'x_total{route="/a",status="200"} 3',
        'x_total{route="we\\"ird\\n"} 1',
      ].join("\n"),
    );
  });

  it("renders cumulative histogram buckets with +Inf, sum and count", () => {
    const histogram = new Histogram("t_seconds", "Time.", [0.1, 1]);
    histogram.observe({}, 0.05);
    histogram.observe({}, 0.5);
    histogram.observe({}, 5);
    expect(histogram.render().split("\n").slice(2)).toEqual([
      't_seconds_bucket{le="0.1"} 1',
      't_seconds_bucket{le="1"} 2',
      't_seconds_bucket{le="+Inf"} 3',
      "t_seconds_sum 5.55",
      "t_seconds_count 3",
    ]);
  });
});
