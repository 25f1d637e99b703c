import { getJson, getText, segment } from "./api.ts";
import { CHANNELS, channelTokens } from "./channels.ts";
import { EVENT_MARKS, groundingClass, groundingText, markOf, renderChart } from "./chart.ts";
import { el, replaceChildren } from "./dom.ts";
import { cost, percent, tokens, units, when } from "./format.ts";
import { longText, payloadView } from "./payload-view.ts";
import { showError } from "./sessions-view.ts";
import type {
  ContextAnswer,
  GovernanceEvent,
  Message,
  MissingSpan,
  RequestPayload,
  Session,
  Timeline,
  TimelineRequest,
} from "./types.ts";

function figure(label: string, value: string): HTMLElement {
  return el(
    "div",
    { className: "figure" },
    el("div", { className: "figure-value", text: value }),
    el("div", { className: "figure-label", text: label }),
  );
}

function eventText(event: GovernanceEvent): string {
  const extra = [event.reason, typeof event["stage"] === "string" ? event["stage"] : undefined]
    .filter((part) => part !== undefined)
    .join(", ");
  return `${event.type}: ${tokens(event.tokensBefore)} → ${tokens(event.tokensAfter)} tokens${extra === "" ? "" : ` (${extra})`}${event.messageIds.length > 0 ? `, ${event.messageIds.length} messages` : ""}`;
}

function legend(): HTMLElement {
  return el(
    "div",
    { className: "legend" },
    ...CHANNELS.map((channel) =>
      el(
        "span",
        { className: "legend-item" },
        el("span", { className: `swatch ${channel.className}` }),
        channel.label,
      ),
    ),
    el("span", { className: "legend-item" }, el("span", { className: "swatch raw" }), "Raw (ungoverned)"),
    el(
      "span",
      { className: "legend-item" },
      el("span", { className: "swatch cached" }),
      "Read from prompt cache",
    ),
    ...EVENT_MARKS.map((mark) =>
      el(
        "span",
        { className: "legend-item" },
        el("span", { className: `swatch mark ${mark.className}` }),
        mark.label,
      ),
    ),
    ...[
      ["g-full", "Grounding: every span used in view"],
      ["g-part", "over half"],
      ["g-low", "half or less"],
    ].map(([className, label]) =>
      el(
        "span",
        { className: "legend-item" },
        el("span", { className: `swatch grounding ${className}` }),
        label,
      ),
    ),
  );
}

function channelTable(request: TimelineRequest): HTMLElement {
  const rows = CHANNELS.map((channel) =>
    el(
      "tr",
      {},
      el("td", { text: channel.label }),
      el("td", { className: "num", text: tokens(channelTokens(request.raw, channel.key)) }),
      el("td", { className: "num", text: tokens(channelTokens(request.governed, channel.key)) }),
    ),
  );
  return el(
    "table",
    { className: "channels" },
    el(
      "thead",
      {},
      el("tr", {}, el("th", { text: "Channel" }), el("th", { text: "Raw" }), el("th", { text: "Governed" })),
    ),
    el(
      "tbody",
      {},
      ...rows,
      el(
        "tr",
        { className: "total" },
        el("td", { text: "Total" }),
        el("td", { className: "num", text: tokens(request.raw.total) }),
        el("td", { className: "num", text: tokens(request.governed.total) }),
      ),
      ...(
        [
          ["Read from prompt cache", tokens(request.cacheReadTokens)],
          ["Written to prompt cache", tokens(request.cacheWriteTokens)],
          ["Cost (units of uncached input)", units(request.costUnits)],
          ["Re-reading what it lacked", units(request.rereadCostUnits)],
        ] as const
      ).map(([label, value]) =>
        el("tr", {}, el("td", { text: label }), el("td", {}), el("td", { className: "num", text: value })),
      ),
    ),
  );
}

const FATES: Readonly<Record<MissingSpan["source"]["fate"], string>> = {
  offloaded: "offloaded in this payload",
  cut: "cut in this payload",
  summarised: "summarised in this payload",
  removed: "removed from this payload",
};

/** The payload messages standing for history that held missing spans, with a note saying which spans. */
function missingNotes(spans: readonly MissingSpan[]): Map<string, string> {
  const bySource = new Map<string, { spans: MissingSpan[] }>();
  for (const span of spans) {
    const id = span.source.viewMessageId;
    if (id === undefined) continue;
    const entry = bySource.get(id) ?? { spans: [] };
    entry.spans.push(span);
    bySource.set(id, entry);
  }
  const notes = new Map<string, string>();
  for (const [id, entry] of bySource) {
    const seqs = [...new Set(entry.spans.map((span) => `#${span.source.seq}`))].join(", ");
    const fate = entry.spans[0]!.source.fate;
    const lead =
      fate === "summarised"
        ? `This summary covers ${seqs}, which held`
        : `This message was ${fate === "offloaded" ? "offloaded" : "cut"}; it held`;
    notes.set(
      id,
      `${lead} ${entry.spans.length} span${entry.spans.length === 1 ? "" : "s"} the reply used that this payload lacks: ${entry.spans.map((span) => span.text).join(" · ")}`,
    );
  }
  return notes;
}

function groundingSection(request: TimelineRequest, panel: HTMLElement): (HTMLElement | false)[] {
  const grounding = request.grounding;
  if (grounding === undefined) return [];
  const heading =
    grounding.score === undefined
      ? "Grounding: the reply used nothing from its context"
      : `Grounding ${groundingText(request)}${grounding.anchors > 0 ? `, edit anchors ${grounding.anchorsKept} of ${grounding.anchors}` : ""}`;
  const jump = (id: string) =>
    panel.querySelector(`article[data-message-id="${CSS.escape(id)}"]`)?.scrollIntoView({ block: "center" });
  return [
    el("h3", { className: `grounding-heading ${groundingClass(grounding.score)}`, text: heading }),
    grounding.missing.length > 0 &&
      el(
        "ul",
        { className: "missing-spans" },
        ...grounding.missing.map((span) => {
          const id = span.source.viewMessageId;
          const where = `#${span.source.seq} ${span.source.role}`;
          return el(
            "li",
            { className: `missing-span fate-${span.source.fate}` },
            el("span", { className: "span-kind", text: span.kind }),
            " ",
            el("code", { className: "span-text", text: span.text }),
            " — held by ",
            id === undefined
              ? where
              : el("button", { className: "link", text: where, on: { click: () => jump(id) } }),
            `, ${FATES[span.source.fate]}`,
          );
        }),
        grounding.missingCount > grounding.missing.length &&
          el("li", {
            className: "muted",
            text: `and ${grounding.missingCount - grounding.missing.length} more`,
          }),
      ),
  ];
}

async function showRequest(panel: HTMLElement, sessionId: string, index: number): Promise<void> {
  replaceChildren(panel, el("p", { className: "muted", text: `Loading request ${index + 1}…` }));
  const base = `/v1/sessions/${segment(sessionId)}/timeline/${index}`;
  const payload = await getJson<RequestPayload>(base);
  const request = payload.request;
  const open = async (ref: string) =>
    (await getJson<{ text: string }>(`${base}/offloaded/${segment(ref)}`)).text;
  replaceChildren(
    panel,
    el("h2", { text: `Request ${index + 1} — ${when(request.at)}` }),
    request.error !== undefined &&
      el("p", { className: "error", text: `Governance refused this request: ${request.error}` }),
    el(
      "div",
      { className: "request-top" },
      channelTable(request),
      el(
        "div",
        { className: "request-events" },
        el("h3", { text: request.checkpoint ? "Events (checkpoint)" : "Events" }),
        request.events.length === 0
          ? el("p", { className: "muted", text: "No governance event: the payload grew at its end." })
          : el(
              "ul",
              {},
              ...request.events.map((event) =>
                el("li", { className: `event ${markOf(event)?.className ?? ""}`, text: eventText(event) }),
              ),
            ),
      ),
    ),
    ...groundingSection(request, panel),
    payload.summaries.length > 0 && el("h3", { text: "Summary in this payload" }),
    ...payload.summaries.map((summary) => el("div", { className: "summary-text" }, longText(summary.text))),
    el("h3", { text: "Replayed payload" }),
    el("p", {
      className: "muted payload-note",
      text:
        "What ctxkit's governance makes of the stored history now — a fresh governor with the window above, " +
        "this server's current policy and the extractive summarizer — not a recording of the request sent: " +
        "summaries are made again, stored summaries and /clear markers are not replayed, and the system " +
        "prompt and tools are not stored.",
    }),
    payloadView(
      payload.messages,
      payload.openai,
      open,
      "OpenAI chat JSON (of this replay)",
      missingNotes(request.grounding?.missing ?? []),
    ),
  );
}

async function showContext(panel: HTMLElement, sessionId: string): Promise<void> {
  replaceChildren(panel, el("p", { className: "muted", text: "Loading the current context…" }));
  const context = await getJson<ContextAnswer>(`/v1/sessions/${segment(sessionId)}/context`);
  const open = (ref: string) => getText(`/v1/sessions/${segment(sessionId)}/blobs/${segment(ref)}`);
  const summaries = context.messages.filter((message) => message.kind === "summary");
  replaceChildren(
    panel,
    el("h2", {
      text: `Current context (${context.source === "last-request" ? "last request sent" : "governed now from the stored history"})`,
    }),
    el("p", {
      className: "muted",
      text: `${tokens(context.tokens.total)} of ${tokens(context.tokens.usable)} usable tokens (${percent(context.tokens.total / Math.max(1, context.tokens.usable))}) · ${when(context.preparedAt)}`,
    }),
    el(
      "ul",
      {},
      ...CHANNELS.map((channel) =>
        el("li", { text: `${channel.label}: ${tokens(channelTokens(context.channels, channel.key))}` }),
      ),
    ),
    context.system !== "" && el("h3", { text: "System prompt" }),
    context.system !== "" && longText(context.system),
    summaries.length > 0 && el("h3", { text: "Summary" }),
    ...summaries.map((message) =>
      el(
        "div",
        { className: "summary-text" },
        longText(message.content.map((block) => (block.type === "text" ? block.text : "")).join("\n")),
      ),
    ),
    el("h3", {
      text:
        context.source === "last-request"
          ? "Payload of the last request sent (governed messages)"
          : "Payload the next request would send (preview)",
    }),
    payloadView(context.messages, context.openai, open, "OpenAI chat JSON (the governed messages)"),
  );
}

function storedSummaries(messages: readonly Message[]): HTMLElement | undefined {
  const summaries = messages.filter((message) => message.kind === "summary");
  if (summaries.length === 0) return undefined;
  return el(
    "section",
    { className: "stored-summaries" },
    el("h2", { text: `Summaries stored in the session (${summaries.length})` }),
    ...summaries.map((message) =>
      el(
        "details",
        {},
        el("summary", {
          text: `#${message.seq}${message.summaryOf === undefined ? "" : ` replaces seq ${message.summaryOf.fromSeq}–${message.summaryOf.toSeq}`} · ${when(message.createdAt)}`,
        }),
        longText(message.content.map((block) => (block.type === "text" ? block.text : "")).join("\n")),
      ),
    ),
  );
}

function replayNote(timeline: Timeline): string {
  const cache = timeline.cacheModel;
  const totals = timeline.totals;
  const model =
    timeline.settingsFrom === "session"
      ? `with the governance the session recorded${timeline.model === undefined ? "" : ` (${timeline.model})`}`
      : timeline.model === undefined
        ? "with this server's settings"
        : `as ${timeline.model} (${timeline.settingsFrom === "recorded model" ? "the model the session recorded" : "this server's model"})`;
  const prices =
    cache.provider === "none"
      ? "with no prompt cache"
      : `by the ${cache.provider} prompt cache (read ${cache.read.toFixed(2)}×, write ${cache.write.toFixed(2)}×, entries live ${Math.round(cache.ttlSeconds / 60)} min)`;
  return (
    `Replayed ${model} with a ${tokens(timeline.contextWindow)}-token window (${tokens(timeline.usable)} usable) and the ` +
    `extractive summarizer, priced ${prices}. Cost in units of uncached input: ${units(totals.costUnits)} as run + ` +
    `${units(totals.summarizerCostUnits)} for ${totals.summaryCalls} summaries billed as LLM calls + ` +
    `${units(totals.rereadCostUnits)} for ${totals.rereads} re-reads of what a view lacked = ${units(totals.costWithRereads)}. ` +
    `Grounding: of the spans each recorded reply copied from its context, the share its view still showed. ` +
    `Click a bar or a row for its payload.`
  );
}

/** One row per request: its tokens, cache bill, cost and grounding. Clicking a row selects its request. */
function requestTable(requests: readonly TimelineRequest[], onSelect: (index: number) => void): HTMLElement {
  const headers = [
    "Request",
    "Raw",
    "Governed",
    "Cache read",
    "Cache write",
    "Cost",
    "Grounding",
    "Missing",
    "Events",
  ];
  return el(
    "div",
    { className: "requests-box" },
    el(
      "table",
      { className: "requests" },
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          ...headers.map((header, column) =>
            el("th", { className: column === 0 || column === 8 ? "" : "num", text: header }),
          ),
        ),
      ),
      el(
        "tbody",
        {},
        ...requests.map((request) => {
          const grounding = request.grounding;
          const events = [
            ...new Set(
              request.events.filter((event) => markOf(event) !== undefined).map((event) => event.type),
            ),
          ];
          return el(
            "tr",
            {
              className: `request-row${request.error === undefined ? "" : " refused"}${grounding !== undefined && grounding.missingCount > 0 ? " missing-row" : ""}`,
              attrs: { "data-index": String(request.index) },
              on: { click: () => onSelect(request.index) },
            },
            el("td", { text: String(request.index + 1) }),
            el("td", { className: "num", text: tokens(request.raw.total) }),
            el("td", { className: "num", text: tokens(request.governed.total) }),
            el("td", { className: "num", text: tokens(request.cacheReadTokens) }),
            el("td", { className: "num", text: tokens(request.cacheWriteTokens) }),
            el("td", { className: "num", text: units(request.costUnits + request.rereadCostUnits) }),
            el("td", {
              className: `num grounding ${groundingClass(grounding?.score)}`,
              text: groundingText(request),
            }),
            el("td", {
              className: "num missing",
              text:
                grounding === undefined || grounding.missingCount === 0 ? "" : String(grounding.missingCount),
            }),
            el("td", { text: request.error === undefined ? events.join(", ") : `refused: ${request.error}` }),
          );
        }),
      ),
    ),
  );
}

/**
 * A session's view: its figures (cost as billed by the session's prompt-cache model, with summaries and re-reads;
 * grounding), the per-request chart (governed tokens by channel vs raw, cache reads, events, grounding) and table,
 * the list of governance events, the selected request's replayed payload with its summary and offloaded outputs,
 * the current context, and the summaries stored in the session.
 *
 * @example
 * await renderSession(main, "ses_1");
 */
export async function renderSession(main: HTMLElement, sessionId: string): Promise<void> {
  replaceChildren(main, el("p", { className: "muted", text: "Replaying the session…" }));
  const id = segment(sessionId);
  const [{ session }, timeline, stored] = await Promise.all([
    getJson<{ session: Session }>(`/v1/sessions/${id}`),
    getJson<Timeline>(`/v1/sessions/${id}/timeline`),
    getJson<{ messages: Message[] }>(`/v1/sessions/${id}/messages?strategy=summaries`),
  ]);
  const requests = timeline.requests;
  const sum = (pick: (request: TimelineRequest) => number) =>
    requests.reduce((total, request) => total + pick(request), 0);
  const governed = sum((request) => request.governed.total);
  const raw = sum((request) => request.raw.total);
  const totals = timeline.totals;
  const compactions = sum(
    (request) => request.events.filter((event) => event.type === "compaction-end").length,
  );
  const panel = el("section", { className: "request-panel", attrs: { id: "request" } });
  const chartBox = el("div", { className: "chart-box" });
  let selected: number | undefined;
  let scale: "governed" | "raw" = "governed";
  const table = requestTable(requests, (index) => select(index));
  const select = (index: number) => {
    selected = index;
    drawChart();
    for (const row of table.querySelectorAll("tr.request-row"))
      row.classList.toggle("selected", row.getAttribute("data-index") === String(index));
    showRequest(panel, sessionId, index).catch((error: unknown) => showError(panel, error));
  };
  const drawChart = () =>
    chartBox.replaceChildren(renderChart(timeline, { selected, scale, onSelect: select }));
  const scaleButton = el("button", {
    className: "scale-toggle",
    text: "Fit raw tokens",
    on: {
      click: () => {
        scale = scale === "governed" ? "raw" : "governed";
        scaleButton.textContent = scale === "governed" ? "Fit raw tokens" : "Fit governed tokens";
        drawChart();
      },
    },
  });
  drawChart();
  const eventItems = requests.flatMap((request) =>
    request.events
      .filter((event) => markOf(event) !== undefined)
      .map((event) =>
        el(
          "li",
          { className: `event ${markOf(event)?.className ?? ""}` },
          el("button", {
            className: "link",
            text: `Request ${request.index + 1}`,
            on: { click: () => select(request.index) },
          }),
          ` ${eventText(event)}`,
        ),
      ),
  );
  replaceChildren(
    main,
    el("p", {}, el("a", { text: "← Sessions", attrs: { href: "#/" } })),
    el("h1", { text: session.title ?? "(untitled)" }),
    el("p", {
      className: "muted",
      text: `${session.id}${session.agent === undefined ? "" : ` · ${session.agent}`}${session.origin === undefined ? "" : ` · imported from ${session.origin.format}`} · updated ${when(session.updatedAt)}`,
    }),
    el(
      "div",
      { className: "figures" },
      figure("messages", tokens(session.messageCount)),
      figure("requests", tokens(requests.length)),
      figure("raw input tokens", tokens(raw)),
      figure("governed input tokens", tokens(governed)),
      figure(
        "read from prompt cache",
        totals.inputTokens === 0 ? "—" : percent(totals.cacheReadTokens / totals.inputTokens),
      ),
      figure("cost units, with summaries and re-reads", units(totals.costWithRereads)),
      figure("cost units without governance", units(totals.rawCostUnits)),
      figure("next-step grounding", percent(totals.grounding)),
      figure("edit anchors kept", percent(totals.anchorsKept)),
      figure("compactions", tokens(compactions)),
      figure("recorded cost", cost(session.cost)),
    ),
    el("h2", { text: "Tokens per request" }),
    el("p", { className: "muted replay-note", text: replayNote(timeline) }),
    el("div", { className: "chart-tools" }, scaleButton),
    chartBox,
    legend(),
    el("h2", { text: "Requests" }),
    table,
    el("h2", { text: "Governance events" }),
    eventItems.length === 0
      ? el("p", { className: "muted", text: "None: every request fit as it was." })
      : el("ul", { className: "events" }, ...eventItems),
    panel,
    el(
      "section",
      { className: "context-panel" },
      el("button", {
        className: "load-context",
        text: "Show the current context",
        on: {
          click: (event) => {
            const box = (event.currentTarget as HTMLElement).parentElement!;
            showContext(box, sessionId).catch((error: unknown) => showError(box, error));
          },
        },
      }),
    ),
    storedSummaries(stored.messages),
  );
}
