import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LanguageModelV4GenerateResult, LanguageModelV4Prompt } from "@ai-sdk/provider";
import { generateText, jsonSchema, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { afterAll, describe, expect, it } from "vitest";
import { createContextEngine, type ContextEngine } from "../../src/engine/context-engine.ts";
import type { CallModel, ExecuteTool } from "../../src/engine/agent-run.ts";
import type { PreparedRequest } from "../../src/engine/prepared-request.ts";
import { toAiSdk } from "../../src/formats/providers/ai-sdk/index.ts";
import type { GovernanceEvent } from "../../src/governance/events.ts";
import { messageText } from "../../src/model/blocks.ts";
import type { ContentBlock, Message } from "../../src/model/message.ts";
import { openSqliteSessionStore, type SqliteSessionStore } from "../../src/store/sqlite/index.ts";
import { FakeTokenCounter } from "../../src/test/fake-token-counter.ts";

const CONTEXT_WINDOW = 16_000;
const TURNS = 200;
const RESTART_AFTER = 100;
const READS_PER_TURN = 2;
const SESSION = "long-run";
const SYSTEM = "You are a coding agent. Read the files a task names, then report.";

const charsOf = (prompt: LanguageModelV4Prompt): number =>
  prompt.reduce((sum, message) => {
    if (typeof message.content === "string") return sum + message.content.length;
    return (
      sum +
      message.content.reduce((inner, part) => {
        if (part.type === "text" || part.type === "reasoning") return inner + part.text.length;
        if (part.type === "tool-call") return inner + JSON.stringify(part.input).length;
        if (part.type === "tool-result") return inner + JSON.stringify(part.output).length;
        return inner;
      }, 0)
    );
  }, 0);

/**
 * The scripted agent, speaking the AI SDK's language-model interface: for the task in the latest user message it
 * reads two files (one tool call per step), then reports. Stateless, so it carries on after a restart.
 */
function scriptedAgent() {
  const promptChars: number[] = [];
  const model = new MockLanguageModelV4({
    doGenerate: async ({ prompt }): Promise<LanguageModelV4GenerateResult> => {
      promptChars.push(charsOf(prompt));
      const lastUser = prompt.findLastIndex(
        (message) =>
          message.role === "user" &&
          message.content.some((part) => part.type === "text" && part.text.startsWith("Task ")),
      );
      const instruction = prompt[lastUser];
      const text =
        instruction?.role === "user" && instruction.content[0]?.type === "text"
          ? instruction.content[0].text
          : "";
      const task = /^Task (\d+):/.exec(text)?.[1] ?? "?";
      const reads = prompt.slice(lastUser).filter((message) => message.role === "tool").length;
      const usage = {
        inputTokens: {
          total: Math.ceil(charsOf(prompt) / 4),
          noCache: undefined,
          cacheRead: undefined,
          cacheWrite: undefined,
        },
        outputTokens: { total: 20, text: 20, reasoning: undefined },
      };
      if (reads < READS_PER_TURN)
        return {
          content: [
            {
              type: "tool-call",
              toolCallId: `call_${task}_${reads}`,
              toolName: "read_file",
              input: JSON.stringify({ path: `src/task${task}/part${reads}.ts` }),
            },
          ],
          finishReason: { unified: "tool-calls", raw: "tool_calls" },
          usage,
          warnings: [],
        };
      return {
        content: [{ type: "text", text: `Task ${task} done: read ${reads} files.` }],
        finishReason: { unified: "stop", raw: "stop" },
        usage,
        warnings: [],
      };
    },
  });
  return { model, promptChars };
}

const tools = {
  read_file: tool({
    description: "Read a file of the repository",
    inputSchema: jsonSchema<{ path: string }>({
      type: "object",
      properties: { path: { type: "string" } },
      required: ["path"],
    }),
  }),
};

/** One model step through the AI SDK: the prepared request as ModelMessages, the reply as ctxkit blocks. */
function callThrough(model: MockLanguageModelV4, requests: PreparedRequest[]): CallModel {
  return async (request, signal) => {
    requests.push(request);
    const result = await generateText({
      model,
      instructions: request.system,
      messages: toAiSdk(request.messages).messages,
      tools,
      abortSignal: signal,
    });
    const content: ContentBlock[] = [
      ...(result.text === "" ? [] : [{ type: "text" as const, text: result.text }]),
      ...result.toolCalls.map((call) => ({
        type: "tool-call" as const,
        id: call.toolCallId,
        name: call.toolName,
        input: call.input as { path: string },
      })),
    ];
    return {
      content,
      usage: { input: result.usage.inputTokens ?? 0, output: result.usage.outputTokens ?? 0 },
    };
  };
}

/** About 1,500 tokens of source per file read. */
const readFile: ExecuteTool = async (call) => {
  const path = (call.input as { path: string }).path;
  const lines = Array.from({ length: 120 }, (_, line) => `export const v${line} = "${path}:${line}";`);
  return { content: `// ${path}\n${lines.join("\n")}` };
};

const userTexts = (messages: readonly Message[]) =>
  messages.filter((message) => message.role === "user" && message.kind === undefined).map(messageText);
const assistantTexts = (messages: readonly Message[]) =>
  messages
    .filter((message) => message.role === "assistant")
    .map(messageText)
    .filter(Boolean);

describe("200 turns of an agent through the engine on SQLite, with a restart midway", () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it("compacts, never exceeds the window, and continues after a restart with the summary and recent turns", async () => {
    const dir = await mkdtemp(join(tmpdir(), "ctxkit-long-run-"));
    dirs.push(dir);
    const path = join(dir, "agent.db");
    const events: GovernanceEvent[] = [];
    const counter = new FakeTokenCounter();
    const open = async (): Promise<[SqliteSessionStore, ContextEngine]> => {
      const store = await openSqliteSessionStore({ path, retentionDays: 0 });
      const engine = await createContextEngine({
        store,
        contextWindow: CONTEXT_WINDOW,
        maxOutputTokens: 2_000,
        tokenCounter: counter,
        onEvent: (event) => events.push(event),
      });
      return [store, engine];
    };
    const agent = scriptedAgent();
    const requests: PreparedRequest[] = [];
    const callModel = callThrough(agent.model, requests);

    const runTurns = async (engine: ContextEngine, from: number, to: number) => {
      const session = engine.session(SESSION);
      for (let turn = from; turn <= to; turn++) {
        const result = await session.run(`Task ${turn}: review src/task${turn}/`, callModel, {
          system: SYSTEM,
          tools: [{ name: "read_file", description: "Read a file of the repository" }],
          executeTool: readFile,
          maxSteps: 5,
        });
        expect(result.stoppedBy).toBe("answer");
        expect(messageText(result.reply!)).toBe(`Task ${turn} done: read ${READS_PER_TURN} files.`);
      }
    };

    let [store, engine] = await open();
    await runTurns(engine, 1, RESTART_AFTER);
    const beforeRestart = requests.at(-1)!;
    const compactionsBefore = events.filter((event) => event.type === "compaction-end").length;
    expect(compactionsBefore).toBeGreaterThan(3);

    // "Restart": close the store, drop the engine, open a new one on the same database file.
    await store.close();
    [store, engine] = await open();
    const stored = await store.loadMessages(SESSION);
    // Persisted: the head anchor (the first run), then the summary of what followed, then the recent turns.
    const storedSummary = stored.findIndex((message) => message.kind === "summary");
    expect(storedSummary).toBeGreaterThan(0);
    expect(userTexts(stored.slice(0, storedSummary))).toEqual(["Task 1: review src/task1/"]);
    expect(userTexts(stored).at(-1)).toBe(`Task ${RESTART_AFTER}: review src/task${RESTART_AFTER}/`);

    await runTurns(engine, RESTART_AFTER + 1, TURNS);
    const afterRestart = requests[RESTART_AFTER * (READS_PER_TURN + 1)]!;
    // The first request after the restart: head anchor, summary, the recent turns as they were, the new task last.
    const summaryAt = afterRestart.messages.findIndex((message) => message.kind === "summary");
    expect(summaryAt).toBeGreaterThan(0);
    expect(messageText(afterRestart.messages[summaryAt]!)).toContain("Summary of");
    expect(userTexts(afterRestart.messages.slice(0, summaryAt))).toEqual(["Task 1: review src/task1/"]);
    const recentUsers = userTexts(beforeRestart.messages).slice(-2);
    expect(recentUsers).toEqual([
      `Task ${RESTART_AFTER - 1}: review src/task${RESTART_AFTER - 1}/`,
      `Task ${RESTART_AFTER}: review src/task${RESTART_AFTER}/`,
    ]);
    const afterSummary = afterRestart.messages.slice(summaryAt + 1);
    expect(userTexts(afterSummary).slice(-3)).toEqual([
      ...recentUsers,
      `Task ${RESTART_AFTER + 1}: review src/task${RESTART_AFTER + 1}/`,
    ]);
    expect(assistantTexts(afterSummary).slice(-2)).toEqual([
      `Task ${RESTART_AFTER - 1} done: read ${READS_PER_TURN} files.`,
      `Task ${RESTART_AFTER} done: read ${READS_PER_TURN} files.`,
    ]);
    expect(afterRestart.messages.at(-1)?.role).toBe("user");

    // Compactions happened on both sides of the restart, and no request ever exceeded the window.
    expect(events.filter((event) => event.type === "compaction-end").length).toBeGreaterThan(
      compactionsBefore + 3,
    );
    expect(requests).toHaveLength(TURNS * (READS_PER_TURN + 1));
    for (const request of requests) {
      expect(request.tokens.total + request.tokens.reservedOutput).toBeLessThanOrEqual(CONTEXT_WINDOW);
    }
    expect(agent.promptChars).toHaveLength(requests.length);
    // What the model received, ~4 characters a token (ungoverned it would reach ~600k tokens by the end).
    expect(Math.max(...agent.promptChars) / 4).toBeLessThan(CONTEXT_WINDOW);

    // Every turn is stored (summarised rows included), in order.
    const all = await store.loadMessages(SESSION, { strategy: "all" });
    const tasks = userTexts(all).map((text) => Number(/^Task (\d+):/.exec(text)?.[1]));
    expect(tasks).toEqual(Array.from({ length: TURNS }, (_, index) => index + 1));
    await store.close();
  });
});
