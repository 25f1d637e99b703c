const MISSING = "—";

/**
 * Renders rows as an aligned plain-text table (numbers right-aligned, also beside `—` for a missing number),
 * for human-readable CLI output.
 *
 * @example
 * formatTable(["file", "tokens"], [["a.jsonl", 1200]]);
 */
export function formatTable(
  headers: readonly string[],
  rows: readonly (readonly (string | number)[])[],
): string {
  const cells = [
    headers.map(String),
    ...rows.map((row) => row.map((cell) => (typeof cell === "number" ? formatNumber(cell) : cell))),
  ];
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? "").length)));
  // A column of numbers, "—" standing for a missing one, is right-aligned.
  const numeric = headers.map(
    (_, column) =>
      rows.some((row) => typeof row[column] === "number") &&
      rows.every((row) => typeof row[column] === "number" || row[column] === MISSING),
  );
  const line = (row: readonly string[]) =>
    row
      .map((cell, column) =>
        numeric[column] ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!),
      )
      .join("  ")
      .trimEnd();
  return [line(cells[0]!), line(widths.map((width) => "-".repeat(width))), ...cells.slice(1).map(line)].join(
    "\n",
  );
}

/** A number with thousands separators (integers) or 2 decimals. */
export function formatNumber(value: number): string {
  return Number.isInteger(value)
    ? value.toLocaleString("en-US")
    : value.toLocaleString("en-US", { maximumFractionDigits: 2 });
}
