// A hand-written SVG line chart (no dependency): one polyline per series.

/** One line of the chart. */
export interface ChartSeries {
  readonly name: string;
  readonly values: readonly number[];
}

const COLORS = [
  "#888888",
  "#d62728",
  "#1f77b4",
  "#2ca02c",
  "#9467bd",
  "#ff7f0e",
  "#8c564b",
  "#e377c2",
  "#17becf",
];

function escape(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

/** An SVG document plotting every series against its index, y from 0 to the largest value (or `limit`). */
export function lineChart(
  title: string,
  yLabel: string,
  series: readonly ChartSeries[],
  limit?: number,
): string {
  const width = 960;
  const height = 480;
  const left = 70;
  const right = 190;
  const top = 40;
  const bottom = 50;
  const plotWidth = width - left - right;
  const plotHeight = height - top - bottom;
  const count = Math.max(2, ...series.map((entry) => entry.values.length));
  const max = Math.max(1, limit ?? 0, ...series.flatMap((entry) => entry.values));
  const x = (index: number) => left + (index / (count - 1)) * plotWidth;
  const y = (value: number) => top + plotHeight - (value / max) * plotHeight;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${left}" y="22" font-size="15" font-weight="bold">${escape(title)}</text>`,
  ];
  for (let tick = 0; tick <= 5; tick++) {
    const value = (max * tick) / 5;
    parts.push(
      `<line x1="${left}" x2="${left + plotWidth}" y1="${y(value).toFixed(1)}" y2="${y(value).toFixed(1)}" stroke="#eeeeee"/>`,
      `<text x="${left - 6}" y="${(y(value) + 4).toFixed(1)}" text-anchor="end">${Math.round(value / 1000)}k</text>`,
    );
  }
  if (limit !== undefined)
    parts.push(
      `<line x1="${left}" x2="${left + plotWidth}" y1="${y(limit).toFixed(1)}" y2="${y(limit).toFixed(1)}" stroke="#000" stroke-dasharray="4 4"/>`,
      `<text x="${left + plotWidth - 4}" y="${(y(limit) - 4).toFixed(1)}" text-anchor="end">window</text>`,
    );
  parts.push(
    `<text x="${left + plotWidth / 2}" y="${height - 12}" text-anchor="middle">request</text>`,
    `<text x="16" y="${top + plotHeight / 2}" transform="rotate(-90 16 ${top + plotHeight / 2})" text-anchor="middle">${escape(yLabel)}</text>`,
  );
  series.forEach((entry, position) => {
    const color = COLORS[position % COLORS.length]!;
    const points = entry.values
      .map((value, index) => `${x(index).toFixed(1)},${y(value).toFixed(1)}`)
      .join(" ");
    parts.push(
      `<polyline fill="none" stroke="${color}" stroke-width="${position === 1 ? 2.5 : 1.3}" points="${points}"/>`,
    );
    const legendY = top + 10 + position * 20;
    parts.push(
      `<line x1="${left + plotWidth + 15}" x2="${left + plotWidth + 40}" y1="${legendY}" y2="${legendY}" stroke="${color}" stroke-width="3"/>`,
      `<text x="${left + plotWidth + 46}" y="${legendY + 4}">${escape(entry.name)}</text>`,
    );
  });
  parts.push("</svg>");
  return `${parts.join("\n")}\n`;
}
