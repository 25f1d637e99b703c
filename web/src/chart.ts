import { CHANNELS, channelTokens } from "./channels.ts";
import { svg } from "./dom.ts";
import { percent, shortTokens, tokens, units } from "./format.ts";
import { niceScale } from "./nice-scale.ts";
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
      "summarizer-failed",
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
  /** `governed`: the axis fits the governed payloads (raw bars are clipped); `raw`: it fits the raw ones too. */
  readonly scale: "governed" | "raw";
  readonly onSelect: (index: number) => void;
}

const PLOT_HEIGHT = 240;
const TOP = 22;
const LEFT = 76;
const PLOT_WIDTH = 900;
const MAX_BAR = 36;
const MARK_ROWS = EVENT_MARKS.length;
const MARK_SIZE = 7;
const GROUNDING_HEIGHT = 18;

/**
 * The class of a request's grounding: `g-full` (every span it used was in view), `g-part` (most were), `g-low`
 * (half or less), `g-none` (its reply copied nothing, or it was refused).
 *
 * @example
 * groundingClass(0.4); // "g-low"
 */
export function groundingClass(score: number | undefined): string {
  if (score === undefined) return "g-none";
  return score >= 1 ? "g-full" : score > 0.5 ? "g-part" : "g-low";
}

/**
 * A request's grounding as text: the share of the spans its reply used that its view showed.
 *
 * @example
 * groundingText(request); // "80% (4 of 5 spans)"
 */
export function groundingText(request: TimelineRequest): string {
  const grounding = request.grounding;
  if (grounding === undefined) return "—";
  if (grounding.score === undefined) return "nothing used";
  return `${percent(grounding.score)} (${grounding.kept} of ${grounding.spans} spans)`;
}

function describe(request: TimelineRequest): string {
  const lines = [
    `Request ${request.index + 1} (${request.at})`,
    `governed ${tokens(request.governed.total)} · raw ${tokens(request.raw.total)}`,
    `cache read ${tokens(request.cacheReadTokens)} · written ${tokens(request.cacheWriteTokens)} · cost ${units(request.costUnits)}`,
    `grounding ${groundingText(request)}${request.grounding !== undefined && request.grounding.missingCount > 0 ? `, ${request.grounding.missingCount} missing` : ""}`,
    ...CHANNELS.map((channel) => `${channel.label}: ${tokens(channelTokens(request.governed, channel.key))}`),
  ];
  for (const event of request.events)
    lines.push(`${event.type}: ${tokens(event.tokensBefore)} → ${tokens(event.tokensAfter)}`);
  if (request.error !== undefined) lines.push(`refused: ${request.error}`);
  return lines.join("\n");
}

/**
 * Draws the per-request chart: one bar per request with the governed tokens stacked by channel, the raw
 * (ungoverned) tokens as a light bar behind it, the prompt-cache reads as a line, the usable window as a dashed
 * line (or a note when it is above the axis), the governance events (compaction, truncation, offload, other) as
 * marks under each bar, and each request's next-step grounding as a bar in its own row. The y-axis ends at a
 * round number just above the largest value plotted. Clicking a bar selects its request. Every label is text.
 *
 * @example
 * container.append(renderChart(timeline, { selected: 3, scale: "governed", onSelect: show }));
 */
export function renderChart(timeline: Timeline, options: ChartOptions): SVGSVGElement {
  const requests = timeline.requests;
  const count = Math.max(1, requests.length);
  // The plot is 900 px wide however few the requests (a short session's bars widen, up to MAX_BAR), so the
  // chart fills its box and the labels drawn from its right edge have room.
  const step = Math.max(5, PLOT_WIDTH / count);
  const barWidth = Math.min(MAX_BAR, Math.max(3, step * 0.72));
  const width = LEFT + count * step + 16;
  const markTop = TOP + PLOT_HEIGHT + 8;
  const groundingTop = markTop + MARK_ROWS * (MARK_SIZE + 3) + 4;
  const height = groundingTop + GROUNDING_HEIGHT + 22;
  const plotted = requests.map((request) =>
    options.scale === "raw" ? Math.max(request.raw.total, request.governed.total) : request.governed.total,
  );
  const scale = niceScale(Math.max(0, ...plotted));
  const yMax = scale.max;
  const y = (value: number) => TOP + PLOT_HEIGHT - (Math.min(value, yMax) / yMax) * PLOT_HEIGHT;
  const root = svg("svg", {
    class: "chart",
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    "aria-label": "Tokens per request: governed by channel, raw, cache reads; events; grounding",
    "data-y-max": yMax,
  }) as SVGSVGElement;

  for (let value = 0; value <= yMax + scale.step / 2; value += scale.step) {
    root.append(
      svg("line", { class: "grid", x1: LEFT, x2: width - 8, y1: y(value), y2: y(value) }),
      svg("text", { class: "axis", x: LEFT - 6, y: y(value) + 4, "text-anchor": "end" }, shortTokens(value)),
    );
  }
  if (timeline.usable <= yMax) {
    root.append(
      svg("line", {
        class: "window",
        x1: LEFT,
        x2: width - 8,
        y1: y(timeline.usable),
        y2: y(timeline.usable),
      }),
      svg(
        "text",
        { class: "axis window-label", x: width - 10, y: y(timeline.usable) - 4, "text-anchor": "end" },
        "usable window",
      ),
    );
  } else {
    root.append(
      svg(
        "text",
        { class: "axis window-label off-scale", x: width - 10, y: TOP - 10, "text-anchor": "end" },
        `usable window ${shortTokens(timeline.usable)}: above this axis`,
      ),
    );
  }

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
    cachedPoints.push(`${x + barWidth / 2},${y(request.cacheReadTokens)}`);
    const score = request.grounding?.score;
    const groundingBar = score === undefined ? 2 : Math.max(2, score * GROUNDING_HEIGHT);
    group.append(
      svg("rect", {
        class: `grounding ${groundingClass(score)}`,
        x,
        y: groundingTop + GROUNDING_HEIGHT - groundingBar,
        width: barWidth,
        height: groundingBar,
      }),
    );
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
  root.append(
    svg(
      "text",
      { class: "axis", x: LEFT - 6, y: groundingTop + GROUNDING_HEIGHT - 4, "text-anchor": "end" },
      "Grounding",
    ),
  );
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
