import { CHANNELS, channelTokens } from "./channels.ts";
import { svg } from "./dom.ts";
import { shortTokens, tokens } from "./format.ts";
import type { GovernanceEvent, Timeline, TimelineRequest } from "./types.ts";

/** The event kinds marked on the timeline, with their CSS class and label. */
export const EVENT_MARKS = [
  { className: "ev-compaction", label: "Compaction", types: ["compaction-end", "turns-trimmed"] },
  { className: "ev-truncation", label: "Truncation", types: ["tool-output-truncated", "tool-output-capped"] },
  { className: "ev-offload", label: "Offload", types: ["tool-output-offloaded", "tool-inputs-elided"] },
  {
    className: "ev-other",
    label: "Other",
    types: [
      "compaction-rolled-back",
      "overflow-prevented",
      "emergency-recovery",
      "orphans-repaired",
      "small-history-compressed",
      "reasoning-stripped",
      "binaries-replaced",
      "compact-summaries-used",
    ],
  },
] as const;

/**
 * The timeline mark of an event, or undefined for events not marked (e.g. `compaction-start`).
 *
 * @example
 * markOf({ type: "compaction-end", … })?.label; // "Compaction"
 */
export function markOf(event: GovernanceEvent): (typeof EVENT_MARKS)[number] | undefined {
  return EVENT_MARKS.find((mark) => (mark.types as readonly string[]).includes(event.type));
}

/** Options of `renderChart`. */
export interface ChartOptions {
  readonly selected: number | undefined;
  /** `governed`: the axis fits the governed payloads and the window (raw bars are clipped); `raw`: fits all. */
  readonly scale: "governed" | "raw";
  readonly onSelect: (index: number) => void;
}

const PLOT_HEIGHT = 240;
const TOP = 12;
const LEFT = 76;
const MARK_ROWS = EVENT_MARKS.length;
const MARK_SIZE = 7;

function describe(request: TimelineRequest): string {
  const lines = [
    `Request ${request.index + 1} (${request.at})`,
    `governed ${tokens(request.governed.total)} · raw ${tokens(request.raw.total)} · cached ${tokens(request.cachedTokens)}`,
    ...CHANNELS.map((channel) => `${channel.label}: ${tokens(channelTokens(request.governed, channel.key))}`),
  ];
  for (const event of request.events)
    lines.push(`${event.type}: ${tokens(event.tokensBefore)} → ${tokens(event.tokensAfter)}`);
  if (request.error !== undefined) lines.push(`refused: ${request.error}`);
  return lines.join("\n");
}

/**
 * Draws the per-request chart: one bar per request with the governed tokens stacked by channel, the raw
 * (ungoverned) tokens as a light bar behind it, the prompt-cache hits as a line, the usable window as a dashed
 * line, and the governance events (compaction, truncation, offload, other) as marks under each bar. Clicking a
 * bar selects its request. Every label is text content.
 *
 * @example
 * container.append(renderChart(timeline, { selected: 3, scale: "governed", onSelect: show }));
 */
export function renderChart(timeline: Timeline, options: ChartOptions): SVGSVGElement {
  const requests = timeline.requests;
  const count = Math.max(1, requests.length);
  const step = Math.min(28, Math.max(5, 900 / count));
  const barWidth = Math.max(3, step * 0.72);
  const width = LEFT + count * step + 16;
  const markTop = TOP + PLOT_HEIGHT + 8;
  const height = markTop + MARK_ROWS * (MARK_SIZE + 3) + 22;
  const governedMax = Math.max(timeline.usable, ...requests.map((request) => request.governed.total));
  const rawMax = Math.max(governedMax, ...requests.map((request) => request.raw.total));
  const yMax = Math.max(1, (options.scale === "raw" ? rawMax : governedMax) * 1.05);
  const y = (value: number) => TOP + PLOT_HEIGHT - (Math.min(value, yMax) / yMax) * PLOT_HEIGHT;
  const root = svg("svg", {
    class: "chart",
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    "aria-label": "Tokens per request: governed by channel, raw, cached",
  }) as SVGSVGElement;

  for (let tick = 0; tick <= 4; tick++) {
    const value = (yMax / 4) * tick;
    root.append(
      svg("line", { class: "grid", x1: LEFT, x2: width - 8, y1: y(value), y2: y(value) }),
      svg("text", { class: "axis", x: LEFT - 6, y: y(value) + 4, "text-anchor": "end" }, shortTokens(value)),
    );
  }
  root.append(
    svg("line", { class: "window", x1: LEFT, x2: width - 8, y1: y(timeline.usable), y2: y(timeline.usable) }),
    svg(
      "text",
      { class: "axis window-label", x: width - 10, y: y(timeline.usable) - 4, "text-anchor": "end" },
      "usable window",
    ),
  );

  const cachedPoints: string[] = [];
  requests.forEach((request, position) => {
    const x = LEFT + position * step + (step - barWidth) / 2;
    const group = svg("g", {
      class: `request${options.selected === request.index ? " selected" : ""}${request.error === undefined ? "" : " refused"}`,
      "data-index": request.index,
    });
    const rawTop = y(request.raw.total);
    group.append(
      svg("rect", {
        class: `raw${request.raw.total > yMax ? " clipped" : ""}`,
        x: x - 1,
        y: rawTop,
        width: barWidth + 2,
        height: TOP + PLOT_HEIGHT - rawTop,
      }),
    );
    let base = 0;
    for (const channel of CHANNELS) {
      const value = channelTokens(request.governed, channel.key);
      if (value <= 0) continue;
      const top = y(base + value);
      group.append(
        svg("rect", { class: `seg ${channel.className}`, x, y: top, width: barWidth, height: y(base) - top }),
      );
      base += value;
    }
    cachedPoints.push(`${x + barWidth / 2},${y(request.cachedTokens)}`);
    request.events.forEach((event) => {
      const mark = markOf(event);
      if (mark === undefined) return;
      const row = EVENT_MARKS.indexOf(mark);
      const cx = x + barWidth / 2;
      const cy = markTop + row * (MARK_SIZE + 3) + MARK_SIZE / 2;
      group.append(
        svg("path", {
          class: `mark ${mark.className}`,
          d: `M${cx} ${cy - MARK_SIZE / 2} L${cx + MARK_SIZE / 2} ${cy + MARK_SIZE / 2} L${cx - MARK_SIZE / 2} ${cy + MARK_SIZE / 2} Z`,
        }),
      );
    });
    group.append(
      svg(
        "rect",
        { class: "hit", x: LEFT + position * step, y: TOP, width: step, height: height - TOP - 20 },
        svg("title", {}, describe(request)),
      ),
    );
    group.addEventListener("click", () => options.onSelect(request.index));
    root.append(group);
  });
  if (cachedPoints.length > 0)
    root.append(svg("polyline", { class: "cached", points: cachedPoints.join(" ") }));
  EVENT_MARKS.forEach((mark, row) => {
    root.append(
      svg(
        "text",
        { class: "axis", x: LEFT - 6, y: markTop + row * (MARK_SIZE + 3) + MARK_SIZE, "text-anchor": "end" },
        mark.label,
      ),
    );
  });
  const labelEvery = Math.max(1, Math.ceil(40 / step));
  requests.forEach((request, position) => {
    if (position % labelEvery !== 0) return;
    root.append(
      svg(
        "text",
        { class: "axis", x: LEFT + position * step + step / 2, y: height - 6, "text-anchor": "middle" },
        String(request.index + 1),
      ),
    );
  });
  return root;
}
