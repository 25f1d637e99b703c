import { createContextEngine } from "../engine/context-engine.ts";
import type { PreparedRequest } from "../engine/prepared-request.ts";
import { cacheProfiles } from "../pricing/cache-profile.ts";
import type { GovernanceEvent } from "../governance/events.ts";
import { messageText } from "../model/blocks.ts";
import type { Message } from "../model/message.ts";
import type { SessionStore } from "../store/session-store.ts";
import type { Summarizer } from "../summarize/summarizer.ts";
import { PrefixCache } from "../replay/prefix-cache.ts";
import type { TokenCounter } from "../tokens/token-counter.ts";
import { scriptedSession, type ScriptedTurn } from "./scripted-session.ts";

/** One model request of the demo, as the story reports it. */
export interface DemoRequest {
  readonly rawTokens: number;
  readonly governedTokens: number;
  readonly cachedTokens: number;
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
  readonly rawCostUnits: number;
  readonly costUnits: number;
  readonly storedMessages: number;
  readonly summarizer: string;
}

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
  const engine = await createContextEngine({
    store: options.store,
    model: "claude-sonnet-4-5",
    contextWindow: options.contextWindow,
    tokenCounter: options.counter,
    ...(options.summarizer !== undefined && { summarizer: options.summarizer }),
    session: { agent: "ctxkit-demo", title: "ctxkit demo: a coding agent explores this repository" },
    onEvent: (event) => pendingEvents.push(event),
  });
  const session = engine.session(options.sessionId);
  const requests: DemoRequest[] = [];
  const compactions: DemoCompaction[] = [];
  const eventCounts: Record<string, number> = {};
  const cache = new PrefixCache();
  const pricing = cacheProfiles.anthropic;
  let rawCostUnits = 0;
  let costUnits = 0;
  let previousRaw = 0;
  const countedRaw = new WeakSet<Message>();
  let rawMessages = 0;

  const measure = async (request: PreparedRequest) => {
    const history = await session.history();
    for (const message of history) {
      if (countedRaw.has(message)) continue;
      countedRaw.add(message);
      rawMessages += options.counter.countMessage(message);
    }
    const fixed = request.tokens.fixed;
    const rawTokens = fixed + rawMessages;
    const common = cache.observe(request.messages);
    let cachedTokens = requests.length === 0 ? 0 : fixed;
    for (const message of request.messages.slice(0, common))
      cachedTokens += options.counter.countMessage(message);
    const governedTokens = request.tokens.total;
    rawCostUnits += previousRaw * pricing.read + (rawTokens - previousRaw) * pricing.write;
    costUnits += cachedTokens * pricing.read + (governedTokens - cachedTokens) * pricing.write;
    previousRaw = rawTokens;
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
    requests.push({ rawTokens, governedTokens, cachedTokens, events: events.map((event) => event.type) });
    options.onProgress?.(requests.length, totalRequests);
  };

  for (const turn of script) {
    let step = 0;
    const outputs = new Map<string, { content: string; isError: boolean }>();
    await session.run(
      turn.instruction,
      async (request) => {
        await measure(request);
        const scripted = turn.steps[step++];
        if (!scripted) return { content: turn.reply, usage: { input: request.tokens.total, output: 60 } };
        const content = scripted.calls.map((call, index) => {
          const id = `call_${requests.length}_${index}`;
          outputs.set(id, { content: call.output, isError: call.isError });
          return { type: "tool-call" as const, id, name: call.name, input: call.input };
        });
        return {
          content: scripted.text ? [{ type: "text" as const, text: scripted.text }, ...content] : content,
          usage: { input: request.tokens.total, output: 40 },
        };
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
    requests,
    compactions,
    eventCounts,
    contextWindow: options.contextWindow,
    rawCostUnits,
    costUnits,
    storedMessages: stats.stored?.messageCount ?? 0,
    summarizer: engine.settings.summarizer.name,
  };
}
