import { createContextEngine } from "../engine/context-engine.ts";
import type { GovernanceEvent } from "../governance/events.ts";
import { messageText } from "../model/blocks.ts";
import type { Message } from "../model/message.ts";
import type { SessionStore } from "../store/session-store.ts";
import type { Summarizer } from "../summarize/summarizer.ts";
import { createExtractiveSummarizer } from "../summarize/extractive-summarizer.ts";
import type { TokenCounter } from "../tokens/token-counter.ts";
import { scriptedSession, type ScriptedTurn } from "./scripted-session.ts";
import { summaryExcerpt } from "./summary-excerpt.ts";

/** One model request of the demo, as the replay of its stored session counts it. */
export interface DemoRequest {
  readonly rawTokens: number;
  readonly governedTokens: number;
}

/** A compaction the demo made, and what its summary kept. */
export interface DemoCompaction {
  readonly request: number;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  /** A few lines of the summary: what it says of the goal and the work before the files it names. */
  readonly summaryExcerpt: readonly string[];
}

/** What a run of the demo left: the session it stored and how it ran. */
export interface DemoRun {
  readonly sessionId: string;
  readonly turns: number;
  readonly storedMessages: number;
  readonly summarizer: string;
}

/**
 * The replay of a stored session the demo's figures come from: the inspector's timeline (and `ctxkit replay
 * --session`) of the same session, so the demo, the inspector and the replay report the same figures.
 */
export interface DemoReplay {
  readonly contextWindow: number;
  readonly requests: readonly {
    readonly raw: { readonly total: number };
    readonly governed: { readonly total: number };
    readonly events: readonly GovernanceEvent[];
  }[];
  /** The governed messages of each request. */
  readonly views: readonly (readonly Message[])[];
  readonly totals: {
    readonly rawCostUnits: number;
    readonly costWithRereads: number;
    readonly grounding: number;
    readonly anchorsKept: number;
  };
}

/** Everything the demo's story needs. */
export interface DemoReport extends DemoRun {
  readonly requests: readonly DemoRequest[];
  readonly compactions: readonly DemoCompaction[];
  readonly eventCounts: Readonly<Record<string, number>>;
  readonly contextWindow: number;
  /** Input cost without governance (the session's cache model, in units of one uncached input token). */
  readonly rawCostUnits: number;
  /** With ctxkit: input, summaries billed as LLM calls, and re-reads of what the view lacked. */
  readonly costUnits: number;
  /** Mean next-step grounding and the share of edit anchors kept. */
  readonly grounding: number;
  readonly anchorsKept: number;
}

/**
 * The demo's report: the run, with every figure taken from the replay of its stored session.
 *
 * @example
 * const report = demoReport(run, await buildTimeline(messages, settings));
 */
export function demoReport(run: DemoRun, replay: DemoReplay): DemoReport {
  const eventCounts: Record<string, number> = {};
  const compactions: DemoCompaction[] = [];
  for (const [index, request] of replay.requests.entries()) {
    for (const event of request.events) {
      eventCounts[event.type] = (eventCounts[event.type] ?? 0) + 1;
      if (event.type !== "compaction-end") continue;
      // The newest summary of the view is the one this compaction wrote.
      const summary = replay.views[index]?.findLast((message) => message.kind === "summary");
      compactions.push({
        request: index,
        tokensBefore: event.tokensBefore,
        tokensAfter: event.tokensAfter,
        summaryExcerpt: summary === undefined ? [] : summaryExcerpt(messageText(summary)),
      });
    }
  }
  return {
    ...run,
    requests: replay.requests.map((request) => ({
      rawTokens: request.raw.total,
      governedTokens: request.governed.total,
    })),
    compactions,
    eventCounts,
    contextWindow: replay.contextWindow,
    rawCostUnits: replay.totals.rawCostUnits,
    costUnits: replay.totals.costWithRereads,
    grounding: replay.totals.grounding,
    anchorsKept: replay.totals.anchorsKept,
  };
}

/** The agent name of the demo's sessions: what `ctxkit demo` finds its earlier runs by. */
export const DEMO_AGENT = "ctxkit-demo";

/** Options of `runDemo`. */
export interface RunDemoOptions {
  store: SessionStore;
  /** The source tree the scripted agent explores. */
  root: string;
  sourceFolder?: string;
  contextWindow: number;
  counter: TokenCounter;
  summarizer?: Summarizer;
  sessionId?: string;
  onProgress?: (done: number, total: number) => void;
}

const SYSTEM_PROMPT =
  "You are a careful coding agent working in a TypeScript repository. Read before you edit, run the tests " +
  "after every change, and explain what you did in one short paragraph.";

const TOOLS = ["list_directory", "grep", "read_file", "edit_file", "bash"].map((name) => ({
  name,
  description: `the ${name} tool`,
  inputSchema: { type: "object", properties: {}, additionalProperties: true },
}));

/**
 * Runs a deterministic, scripted coding-agent session through the context engine (governance, persistence,
 * assembly): the demo behind `ctxkit demo`. Its figures come from replaying the stored session (`demoReport`).
 *
 * @example
 * const run = await runDemo({ store, root: process.cwd(), contextWindow: 48_000, counter });
 */
export async function runDemo(options: RunDemoOptions): Promise<DemoRun> {
  const script: ScriptedTurn[] = scriptedSession({
    root: options.root,
    ...(options.sourceFolder !== undefined && { sourceFolder: options.sourceFolder }),
  });
  const totalRequests = script.reduce((sum, turn) => sum + turn.steps.length + 1, 0);
  const engine = await createContextEngine({
    store: options.store,
    model: "claude-sonnet-4-5",
    contextWindow: options.contextWindow,
    tokenCounter: options.counter,
    summarizer: options.summarizer ?? createExtractiveSummarizer({ counter: options.counter }),
    session: { agent: DEMO_AGENT, title: "ctxkit demo: a coding agent explores this repository" },
  });
  const session = engine.session(options.sessionId);
  let requests = 0;
  const answered = () => options.onProgress?.(++requests, totalRequests);

  for (const turn of script) {
    let step = 0;
    const outputs = new Map<string, { content: string; isError: boolean }>();
    await session.run(
      turn.instruction,
      async (request) => {
        const scripted = turn.steps[step++];
        answered();
        if (!scripted) return { content: turn.reply, usage: { input: request.tokens.total, output: 60 } };
        const calls = scripted.calls.map((call, index) => {
          const id = `call_${requests}_${index}`;
          outputs.set(id, { content: call.output, isError: call.isError });
          return { type: "tool-call" as const, id, name: call.name, input: call.input };
        });
        const content = scripted.text ? [{ type: "text" as const, text: scripted.text }, ...calls] : calls;
        return { content, usage: { input: request.tokens.total, output: 40 } };
      },
      {
        system: SYSTEM_PROMPT,
        tools: TOOLS,
        maxSteps: turn.steps.length + 1,
        stopOnLoop: false,
        executeTool: async (call) => outputs.get(call.id) ?? { content: "unknown call", isError: true },
      },
    );
  }
  const stats = await session.stats();
  return {
    sessionId: session.id,
    turns: script.length,
    storedMessages: stats.stored?.messageCount ?? 0,
    summarizer: engine.settings.summarizer.name,
  };
}
