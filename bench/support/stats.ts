// Small statistics and formatting helpers shared by the benchmarks.

/** The `q` quantile (0–1) of `values` by nearest rank; NaN when empty. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

/** Milliseconds with a precision that suits the magnitude (µs below 1 ms). */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return "—";
  if (ms < 1) return `${(ms * 1000).toFixed(0)} µs`;
  if (ms < 100) return `${ms.toFixed(2)} ms`;
  return `${ms.toFixed(0)} ms`;
}

/** A ratio as `12.3×`, or `—` when undefined. */
export function formatRatio(ratio: number): string {
  if (!Number.isFinite(ratio)) return "—";
  return ratio >= 100 ? `${ratio.toFixed(0)}×` : `${ratio.toFixed(ratio >= 10 ? 1 : 2)}×`;
}

/** A Markdown table. */
export function markdownTable(
  headers: readonly string[],
  rows: readonly (readonly (string | number)[])[],
): string {
  const cell = (value: string | number) =>
    typeof value === "number" ? value.toLocaleString("en-US") : value.replaceAll("|", "\\|");
  return [
    `| ${headers.join(" | ")} |`,
    `| ${headers.map((_, index) => (index === 0 ? "---" : "---:")).join(" | ")} |`,
    ...rows.map((row) => `| ${row.map(cell).join(" | ")} |`),
  ].join("\n");
}

/** Milliseconds since `start` (from `performance.now()`). */
export function since(start: number): number {
  return performance.now() - start;
}
