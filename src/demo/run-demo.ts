import { createContextEngine } from "../engine/context-engine.ts";
import type { PreparedRequest } from "../engine/prepared-request.ts";
import { cacheProfiles } from "../pricing/cache-profile.ts";
import type { GovernanceEvent } from "../governance/events.ts";
import { messageText } from "../model/blocks.ts";
import type { Message } from "../model/message.ts";
import type { SessionStore } from "../store/session-store.ts";
import type { Summarizer } from "../summarize/summarizer.ts";
import { meteredSummarizer } from "../replay/metered-summarizer.ts";
import { ReplayMeter } from "../replay/replay-meter.ts";
import { createExtractiveSummarizer } from "../summarize/extractive-summarizer.ts";
import type { TokenCounter } from "../tokens/token-counter.ts";
import { scriptedSession, type ScriptedTurn } from "./scripted-session.ts";

/** One model request of the demo, as the story reports it. */
export interface DemoRequest {
  readonly rawTokens: number;
  readonly governedTokens: number;
  /** Governed tokens the provider's cache served (Anthropic's, with ctxkit's breakpoints). */
  readonly cachedTokens: number;
  /** Share of what the scripted reply took from its context that the view still showed. */
  readonly grounding?: number;
  readonly events: readonly GovernanceEvent["type"][];
}

/** A compaction the demo made, and what it kept. */
export interface DemoCompaction {
  readonly request: number;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  readonly summaryExcerpt: string;
}

/** Everything the demo's story needs. */
export interface DemoReport {
  readonly sessionId: string;
  readonly turns: number;
  readonly requests: readonly DemoRequest[];
  readonly compactions: readonly DemoCompaction[];
  readonly eventCounts: Readonly<Record<string, number>>;
  readonly contextWindow: number;
  /** Input cost without governance (Anthropic's cache, in units of one uncached input token). */
  readonly rawCostUnits: number;
  /** With ctxkit: input, summaries billed as LLM calls, and re-reads of what the view lacked. */
  readonly costUnits: number;
  /** Mean next-step grounding and the share of edit anchors kept. */
  readonly grounding: number;
  readonly anchorsKept: number;
  readonly storedMessages: number;
  readonly summarizer: string;
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

/** The scripted reply as the message the grounding score reads. */
function replyMessage(content: Message["content"]): Message {
  return { id: "reply", sessionId: "demo", seq: 0, turn: 0, role: "assistant", content, createdAt: "" };
}

/**
 * Runs a deterministic, scripted coding-agent session through the context engine (governance, persistence,
 * assembly) and measures every request against the ungoverned history: the demo behind `ctxkit demo`.
 *
 * @example
 * const report = await runDemo({ store, root: process.cwd(), contextWindow: 48_000, counter });
 */
export async function runDemo(options: RunDemoOptions): Promise<DemoReport> {
  const script: ScriptedTurn[] = scriptedSession({
    root: options.root,
    ...(options.sourceFolder !== undefined && { sourceFolder: options.sourceFolder }),
  });
  const totalRequests = script.reduce((sum, turn) => sum + turn.steps.length + 1, 0);
  const pendingEvents: GovernanceEvent[] = [];
  // Priced as Anthropic bills it (ctxkit's breakpoints, summaries as LLM calls, re-reads of what the view lacked),
  // against the same history ungoverned.
  const tokensOf = (message: Message) => options.counter.countMessage(message);
  const meter = new ReplayMeter({ cache: cacheProfiles.anthropic, tokensOf });
  const rawMeter = new ReplayMeter({ cache: cacheProfiles.anthropic, tokensOf, grounding: false });
  const summarizer = meteredSummarizer(
    options.summarizer ?? createExtractiveSummarizer({ counter: options.counter }),
    options.counter,
    (call) => meter.summary(call),
  );
  const engine = await createContextEngine({
    store: options.store,
    model: "claude-sonnet-4-5",
    contextWindow: options.contextWindow,
    tokenCounter: options.counter,
    summarizer,
    session: { agent: DEMO_AGENT, title: "ctxkit demo: a coding agent explores this repository" },
    onEvent: (event) => pendingEvents.push(event),
  });
  const session = engine.session(options.sessionId);
  const requests: DemoRequest[] = [];
  const compactions: DemoCompaction[] = [];
  const eventCounts: Record<string, number> = {};
  const measure = async (request: PreparedRequest, reply: Message) => {
    const history = await session.history();
    const fixed = { identity: "demo system prompt and tools", tokens: request.tokens.fixed };
    // The scripted agent answers at once: requests follow each other well inside the cache's lifetime.
    const at = requests.length * 10_000;
    const rawBill = rawMeter.request({ at, fixed, history, view: history, reply: [] }).bill;
    const measured = meter.request({ at, fixed, history, view: request.messages, reply: [reply] });
    const events = pendingEvents.splice(0);
    for (const event of events) {
      eventCounts[event.type] = (eventCounts[event.type] ?? 0) + 1;
      if (event.type === "compaction-end") {
        // The newest summary is the one this compaction wrote (earlier ones stay where they stood).
        const summary = request.messages.findLast((message) => message.kind === "summary");
        compactions.push({
          request: requests.length,
          tokensBefore: event.tokensBefore,
          tokensAfter: event.tokensAfter,
          summaryExcerpt: summary ? messageText(summary).split("\n").slice(1, 6).join("\n") : "",
        });
      }
    }
    requests.push({
      rawTokens: rawBill.tokens,
      governedTokens: request.tokens.total,
      cachedTokens: measured.bill.cacheRead,
      ...(measured.grounding?.score !== undefined && { grounding: measured.grounding.score }),
      events: events.map((event) => event.type),
    });
    options.onProgress?.(requests.length, totalRequests);
  };

  for (const turn of script) {
    let step = 0;
    const outputs = new Map<string, { content: string; isError: boolean }>();
    await session.run(
      turn.instruction,
      async (request) => {
        const scripted = turn.steps[step++];
        if (!scripted) {
          await measure(request, replyMessage([{ type: "text", text: turn.reply }]));
          return { content: turn.reply, usage: { input: request.tokens.total, output: 60 } };
        }
        const calls = scripted.calls.map((call, index) => {
          const id = `call_${requests.length}_${index}`;
          outputs.set(id, { content: call.output, isError: call.isError });
          return { type: "tool-call" as const, id, name: call.name, input: call.input };
        });
        const content = scripted.text ? [{ type: "text" as const, text: scripted.text }, ...calls] : calls;
        await measure(request, replyMessage(content));
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
  const grounding = meter.grounding!.totals;
  return {
    sessionId: session.id,
    turns: script.length,
    requests,
    compactions,
    eventCounts,
    contextWindow: options.contextWindow,
    rawCostUnits: rawMeter.totals.costUnits,
    costUnits: meter.totals.costWithRereads,
    grounding: grounding.mean,
    anchorsKept: grounding.anchorShare,
    storedMessages: stats.stored?.messageCount ?? 0,
    summarizer: engine.settings.summarizer.name,
  };
}
