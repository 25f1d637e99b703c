import { eventSummary } from "./event-words.ts";
import type { DemoReport } from "./run-demo.ts";

const BARS = "▁▂▃▄▅▆▇█";

/** A sparkline of `values` (max per bucket when longer than `width`), scaled to `max`. */
export function sparkline(values: readonly number[], max: number, width = 64): string {
  if (values.length === 0) return "";
  const buckets = Math.min(width, values.length);
  let line = "";
  for (let bucket = 0; bucket < buckets; bucket++) {
    const from = Math.floor((bucket * values.length) / buckets);
    const to = Math.max(from + 1, Math.floor(((bucket + 1) * values.length) / buckets));
    const value = Math.max(...values.slice(from, to));
    const level = Math.min(BARS.length - 1, Math.floor((value / max) * (BARS.length - 1)));
    line += BARS[Math.max(0, level)];
  }
  return line;
}

const number = (value: number) => Math.round(value).toLocaleString("en-US");

/** Where the demo's session went: a database (replacing `replaced` earlier demo sessions), or nowhere. */
export interface StoryPlace {
  /** The database the session is in; undefined when it was kept in memory only (`--temporary`). */
  readonly database?: string;
  /** Earlier demo sessions this run replaced in that database. */
  readonly replaced?: number;
  /** How the user runs the CLI, before the hints' arguments (`npm run ctxkit --` in a checkout). Default `ctxkit`. */
  readonly command?: string;
}

/** A hint's command and what it does, aligned. */
function hint(command: string, what: string): string {
  return `  ${command.padEnd(40)}  ${what}`;
}

/** Where the session is, and the commands that show it (each runs as printed). */
function where(report: DemoReport, place: StoryPlace): string[] {
  const cli = place.command ?? "ctxkit";
  const kept = `The session (${report.storedMessages} stored messages, originals kept even where the view summarised them)`;
  if (place.database === undefined) {
    return [
      `${kept} was kept in memory only (--temporary) and is gone; run \`${cli} demo\` without --temporary to keep it.`,
      "",
      "Where to look next:",
    ];
  }
  const replaced = place.replaced ?? 0;
  const db = /^[\w./~-]+$/.test(place.database) ? place.database : JSON.stringify(place.database);
  return [
    `${kept} is in ${place.database} as ${report.sessionId}` +
      (replaced === 0
        ? "."
        : `; it replaces the earlier demo session${replaced === 1 ? "" : `s (${replaced})`} there.`) +
      " Each run of the demo keeps only its newest session.",
    "",
    "Where to look next:",
    hint(
      `${cli} serve --no-auth --db ${db}`,
      "inspect this session in the browser: what the model saw, request by request (this machine only)",
    ),
    hint(`${cli} replay --session ${report.sessionId} --db ${db}`, "the same figures, in the terminal"),
    hint(`${cli} sessions list --db ${db}`, "the stored sessions"),
  ];
}

/**
 * The demo's story, as plain text: the token chart (governed vs raw, per request), the compactions and what
 * they kept, the cost with and without ctxkit, and where to look next.
 *
 * @example
 * io.stdout.write(renderStory(report, { database: "~/.ctxkit/ctxkit.db", replaced: 1 }));
 */
export function renderStory(report: DemoReport, place: StoryPlace): string {
  const raw = report.requests.map((request) => request.rawTokens);
  const governed = report.requests.map((request) => request.governedTokens);
  const maxRaw = Math.max(...raw);
  const maxGoverned = Math.max(...governed);
  const overflowing = raw.filter((tokens) => tokens > report.contextWindow).length;
  const saved = report.rawCostUnits === 0 ? 0 : 1 - report.costUnits / report.rawCostUnits;
  const lines = [
    `ctxkit demo — a coding agent explores and edits this repository: ${report.turns} tasks, ` +
      `${report.requests.length} model requests, a ${number(report.contextWindow)}-token window, summaries by ` +
      `the ${report.summarizer} summarizer.`,
    "",
    `Tokens per request (each column is the largest of its requests; full height = ${number(maxRaw)} tokens):`,
    `  without ctxkit  ${sparkline(raw, maxRaw)}  peak ${number(maxRaw)}`,
    `  with ctxkit     ${sparkline(governed, maxRaw)}  peak ${number(maxGoverned)}`,
    "",
    overflowing > 0
      ? `Without governance ${overflowing} of ${raw.length} requests would not have fit the window; with ctxkit none was over.`
      : "Every request fit the window.",
    `What governance did: ${eventSummary(report.eventCounts)}.`,
    "",
  ];
  for (const [index, compaction] of report.compactions.entries()) {
    lines.push(
      `Compaction ${index + 1} at request ${compaction.request + 1}: ${number(compaction.tokensBefore)} → ` +
        `${number(compaction.tokensAfter)} tokens. It kept the current instruction and the recent work verbatim ` +
        "and wrote this summary of the rest:",
    );
    for (const line of compaction.summaryExcerpt)
      lines.push(`    ${line.length > 110 ? `${line.slice(0, 109)}…` : line}`);
    if (index >= 1 && report.compactions.length > 2) {
      lines.push(`  (… and ${report.compactions.length - 2} more compactions)`);
      break;
    }
  }
  lines.push(
    "",
    "Cost as Anthropic bills it (cache reads 0.1, writes 1.25 behind ctxkit's breakpoints, entries kept 5 minutes; in",
    "units of one uncached input token), with ctxkit's summaries billed as LLM calls and a re-read for every",
    "request whose reply needed something the view had dropped:",
    `  without ctxkit  ${number(report.rawCostUnits)}`,
    `  with ctxkit     ${number(report.costUnits)}  (${(saved * 100).toFixed(1)}% less), with ` +
      `${(report.grounding * 100).toFixed(1)}% of what each reply used still in view ` +
      `(edit anchors ${(report.anchorsKept * 100).toFixed(1)}%)`,
    "",
    ...where(report, place),
    hint(
      `${place.command ?? "ctxkit"} replay <session.jsonl>`,
      "replay your own Claude Code / Codex session (~/.claude/projects, ~/.codex/sessions)",
    ),
  );
  return `${lines.join("\n")}\n`;
}
