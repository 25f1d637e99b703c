import {
  Agent,
  run,
  setTracingDisabled,
  tool,
  Usage,
  type AgentInputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
} from "@openai/agents";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { PreparedRequest } from "../../engine/prepared-request.ts";
import { ConcurrentWriteError } from "../../errors/errors.ts";
import { MemorySessionStore } from "../../store/memory/index.ts";
import type { SessionStore } from "../../store/session-store.ts";
import { FakeSummarizer } from "../../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../../test/fake-token-counter.ts";
import { textChars } from "../shared/text-chars.test-helpers.ts";
import { messagesToItems } from "./agent-items.ts";
import { CtxkitAgentsSession } from "./ctxkit-session.ts";

setTracingDisabled(true);

const WINDOW = 16_000;

/**
 * A model speaking the Agents SDK's `Model` interface: for the latest user question it reads one file, then
 * answers naming the question; every request's input is recorded.
 */
class ReadingModel implements Model {
  readonly inputs: AgentInputItem[][] = [];

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const input =
      typeof request.input === "string" ? [{ role: "user" as const, content: request.input }] : request.input;
    this.inputs.push(input);
    const lastUser = input.findLastIndex(
      (item) => userText(item)?.startsWith("<conversation-summary>") === false,
    );
    const question = userText(input[lastUser]) ?? "";
    const read = input.slice(lastUser).some((item) => item.type === "function_call_result");
    const usage = new Usage({ requests: 1, inputTokens: 100, outputTokens: 10, totalTokens: 110 });
    if (!read)
      return {
        usage,
        output: [
          {
            type: "function_call",
            callId: `call_${this.inputs.length}`,
            name: "read_file",
            status: "completed",
            arguments: JSON.stringify({ path: `src/${question.length}.ts` }),
          },
        ],
      };
    return {
      usage,
      output: [
        {
          type: "message",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: `Answered: ${question}` }],
        },
      ],
    };
  }

  // eslint-disable-next-line require-yield -- the runner is only used non-streamed here
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("not used");
  }
}

const readFile = tool({
  name: "read_file",
  description: "Read a file",
  parameters: z.object({ path: z.string() }),
  execute: async ({ path }) => `// ${path}\n${`export const line = "${path}";\n`.repeat(250)}`,
});

const charsOf = (items: readonly AgentInputItem[]) => textChars(items);

/** The text of a user item given as a string (the runner's input and ctxkit's summaries are). */
const userText = (item: AgentInputItem | undefined): string | undefined =>
  item !== undefined && "role" in item && item.role === "user" && typeof item.content === "string"
    ? item.content
    : undefined;

/** Every item the store holds of the session, verbatim, oldest first (the rows summaries replaced included). */
async function storedItems(store: SessionStore): Promise<AgentInputItem[]> {
  const rows = await store.loadMessages("agents-1", { strategy: "all" });
  const messages = rows.filter((message) => message.kind === undefined);
  return messagesToItems(messages, new Set(messages));
}

function governed(store: SessionStore, requests: PreparedRequest[] = [], contextWindow = WINDOW) {
  return new CtxkitAgentsSession({
    store,
    sessionId: "agents-1",
    contextWindow,
    reservedOutputTokens: 2_000,
    counter: new FakeTokenCounter(),
    summarizer: new FakeSummarizer(),
    onRequest: (request) => requests.push(request),
  });
}

describe("CtxkitAgentsSession", () => {
  it("gives the SDK's runner a governed history within the window over many runs, storing every item verbatim", async () => {
    const store = new MemorySessionStore();
    const requests: PreparedRequest[] = [];
    const session = governed(store, requests);
    const model = new ReadingModel();
    const agent = new Agent({ name: "reader", instructions: "Read, then answer.", model, tools: [readFile] });
    const questions = Array.from(
      { length: 16 },
      (_, index) => `Question ${index + 1}: what is in file ${index}?`,
    );
    for (const question of questions) {
      const result = await run(agent, question, { session });
      expect(result.finalOutput).toBe(`Answered: ${question}`);
    }
    expect(model.inputs).toHaveLength(32);
    // Each file is ~2.5k tokens: ungoverned, the last runs would send ~40k tokens.
    for (const input of model.inputs) expect(charsOf(input) / 4).toBeLessThan(WINDOW);
    expect(requests.some((request) => request.checkpoint)).toBe(true);
    expect(
      requests.flatMap((request) => request.events).some((e) => e.type === "tool-output-offloaded"),
    ).toBe(true);
    const last = model.inputs.at(-1)!;
    // Every call the runner sees is answered.
    const calls = last.flatMap((item) => (item.type === "function_call" ? [item.callId] : []));
    const results = last.flatMap((item) => (item.type === "function_call_result" ? [item.callId] : []));
    expect(new Set(results)).toEqual(new Set(calls));

    // The store holds every item verbatim (the rows summaries replaced included).
    const everything = await storedItems(store);
    expect(everything).toHaveLength(16 * 4);
    expect(
      everything.filter((item) => "role" in item && item.role === "user").map((item) => item.content),
    ).toEqual(questions);
    const outputs = everything.flatMap((item) => (item.type === "function_call_result" ? [item.output] : []));
    expect(outputs).toHaveLength(16);
    for (const output of outputs) expect(JSON.stringify(output).length).toBeGreaterThan(9_000);
  });

  it("governs every model call of a long run with callModelInputFilter, storing the run's items verbatim", async () => {
    const store = new MemorySessionStore();
    const requests: PreparedRequest[] = [];
    const session = governed(store, requests);
    /** Reads twelve files, one per step, then answers: one run piles up ~30k tokens of tool output. */
    class LongReader implements Model {
      readonly inputs: AgentInputItem[][] = [];
      async getResponse(request: ModelRequest): Promise<ModelResponse> {
        const input = typeof request.input === "string" ? [] : request.input;
        this.inputs.push(input);
        const usage = new Usage({ requests: 1, inputTokens: 100, outputTokens: 10, totalTokens: 110 });
        const step = this.inputs.length;
        if (step <= 12)
          return {
            usage,
            output: [
              {
                type: "function_call",
                callId: `call_${step}`,
                name: "read_file",
                status: "completed",
                arguments: JSON.stringify({ path: `src/file${step}.ts` }),
              },
            ],
          };
        return {
          usage,
          output: [
            {
              type: "message",
              role: "assistant",
              status: "completed",
              content: [{ type: "output_text", text: "Read them all." }],
            },
          ],
        };
      }
      // eslint-disable-next-line require-yield -- the runner is only used non-streamed here
      async *getStreamedResponse(): AsyncIterable<never> {
        throw new Error("not used");
      }
    }
    const model = new LongReader();
    const agent = new Agent({ name: "reader", instructions: "Read everything.", model, tools: [readFile] });
    const result = await run(agent, "Read the twelve files.", {
      session,
      maxTurns: 20,
      callModelInputFilter: session.callModelInputFilter,
    });
    expect(result.finalOutput).toBe("Read them all.");
    expect(model.inputs).toHaveLength(13);
    // Without governance within the run the last calls would carry ~30k tokens of file contents.
    for (const input of model.inputs) expect(charsOf(input) / 4).toBeLessThan(WINDOW);
    expect(requests.length).toBeGreaterThanOrEqual(13);
    // The newest read is always there, whole.
    const last = model.inputs.at(-1)!;
    const newest = last.findLast((item) => item.type === "function_call_result");
    expect(JSON.stringify(newest)).toContain("src/file12.ts");
    expect(JSON.stringify(newest).length).toBeGreaterThan(9_000);
    // The store holds the run as it happened: every output verbatim, no governed copy.
    const everything = await storedItems(store);
    const outputs = everything.flatMap((item) => (item.type === "function_call_result" ? [item.output] : []));
    expect(outputs).toHaveLength(12);
    for (const output of outputs) expect(JSON.stringify(output).length).toBeGreaterThan(9_000);
    expect(JSON.stringify(everything)).not.toContain("conversation-summary");
  });

  it("keeps every item's id (tool calls' included) at the next run, so each request starts with the previous one", async () => {
    const store = new MemorySessionStore();
    /** The Responses API's items carry ids: `fc_…` on function calls, `msg_…` on messages. */
    class IdentifyingReader extends ReadingModel {
      override async getResponse(request: ModelRequest): Promise<ModelResponse> {
        const response = await super.getResponse(request);
        const step = this.inputs.length;
        return {
          ...response,
          output: response.output.map((item) => ({
            ...item,
            id: `${item.type === "message" ? "msg" : "fc"}_${step}`,
          })),
        };
      }
    }
    const model = new IdentifyingReader();
    const agent = new Agent({ name: "reader", instructions: "Read, then answer.", model, tools: [readFile] });
    for (const question of ["Why?", "And then what?", "Where exactly?"]) {
      // A new session object each run: a restarted process.
      const session = governed(store, [], 1_000_000);
      await run(agent, question, { session, callModelInputFilter: session.callModelInputFilter });
    }
    expect(model.inputs).toHaveLength(6);
    for (let index = 1; index < model.inputs.length; index++) {
      const previous = model.inputs[index - 1]!;
      expect(JSON.stringify(model.inputs[index]!.slice(0, previous.length))).toBe(JSON.stringify(previous));
    }
    const calls = model.inputs.at(-1)!.filter((item) => item.type === "function_call");
    expect(calls.map((call) => (call as { id?: string }).id)).toEqual(["fc_1", "fc_3", "fc_5"]);
  });

  it("returns untouched items exactly as added, and the last items with a limit", async () => {
    const session = governed(new MemorySessionStore());
    const items: AgentInputItem[] = [
      { role: "user", content: [{ type: "input_text", text: "hi" }] },
      { type: "reasoning", id: "rs_1", content: [], providerData: { encryptedContent: "gAAA" } },
      {
        type: "function_call",
        callId: "c1",
        name: "lookup",
        status: "completed",
        arguments: '{"q":"x"}',
        id: "fc_1",
      },
      {
        type: "function_call_result",
        callId: "c1",
        name: "lookup",
        status: "completed",
        output: { type: "text", text: "42" },
      },
      {
        type: "message",
        role: "assistant",
        status: "completed",
        id: "msg_1",
        content: [{ type: "output_text", text: "42" }],
      },
    ];
    await session.addItems(items.slice(0, 1));
    await session.addItems(items.slice(1));
    expect(await session.getItems()).toEqual(items);
    expect(await session.getItems(2)).toEqual(items.slice(-2));
    expect(await session.getItems(0)).toEqual([]);
    expect(await session.getSessionId()).toBe("agents-1");
  });

  it("pops the most recent item (also from the store) and clears the session", async () => {
    const store = new MemorySessionStore();
    const session = governed(store);
    const user: AgentInputItem = { role: "user", content: "go" };
    const say = (text: string): AgentInputItem => ({
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text }],
    });
    await session.addItems([user]);
    await session.addItems([say("looking"), say("done")]);
    expect(await session.popItem()).toEqual(say("done"));
    expect(await session.getItems()).toEqual([user, say("looking")]);
    expect(await governed(store).getItems()).toEqual([user, say("looking")]);
    expect(await session.popItem()).toEqual(say("looking"));
    expect(await session.getItems()).toEqual([user]);
    await session.addItems([say("again")]);
    expect(await governed(store).getItems()).toEqual([user, say("again")]);
    await session.clearSession();
    expect(await session.getItems()).toEqual([]);
    expect(await store.getSession("agents-1")).toBeUndefined();
    expect(await session.popItem()).toBeUndefined();
  });

  it("hands the runner a summary (in the summary envelope) and the recent items once history passes the trigger", async () => {
    const session = governed(new MemorySessionStore(), [], 8_000);
    const say = (text: string): AgentInputItem => ({
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text }],
    });
    for (let turn = 1; turn <= 30; turn++)
      await session.addItems([
        { role: "user", content: `Question ${turn}: ${"why ".repeat(60)}` },
        say(`Answer ${turn}: ${"because ".repeat(60)}`),
      ]);
    const items = await session.getItems();
    expect(JSON.stringify(items).length / 4).toBeLessThan(8_000);
    const summaries = items.filter((item) => userText(item)?.startsWith("<conversation-summary>"));
    expect(summaries).toHaveLength(1);
    expect(items.at(-1)).toEqual(say(`Answer 30: ${"because ".repeat(60)}`));
    expect(items.at(-2)).toEqual({ role: "user", content: `Question 30: ${"why ".repeat(60)}` });
  });
  it("stores the governor's state with every addItems, so a restarted process sends what this one would", async () => {
    const store = new MemorySessionStore();
    const session = governed(store);
    const model = new ReadingModel();
    const agent = new Agent({ name: "reader", instructions: "Read, then answer.", model, tools: [readFile] });
    for (let question = 1; question <= 8; question++)
      await run(agent, `Question ${question}`, {
        session,
        callModelInputFilter: session.callModelInputFilter,
      });
    expect(await store.loadGovernorState("agents-1")).toBeDefined();
    const restarted = governed(store);
    expect(await restarted.getItems()).toEqual(await session.getItems());
  });

  it("pops an item with one removal, without rewriting the session", async () => {
    const calls: string[] = [];
    const memory = new MemorySessionStore();
    const store = new Proxy(memory, {
      get(target, name, receiver) {
        const value: unknown = Reflect.get(target, name, receiver);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          calls.push(String(name));
          return (value as (...args: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const session = governed(store);
    for (let turn = 1; turn <= 50; turn++)
      await session.addItems([
        { role: "user", content: `Question ${turn}` },
        {
          type: "message",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: `Answer ${turn}` }],
        },
      ]);
    calls.length = 0;
    const popped = await session.popItem();
    expect(popped).toMatchObject({ content: [{ text: "Answer 50" }] });
    expect(calls).toEqual(["removeLastMessage"]);
    const rows = await memory.loadMessages("agents-1", { strategy: "all" });
    expect(rows).toHaveLength(99);
    expect((await session.getItems()).at(-1)).toEqual({ role: "user", content: "Question 50" });
  });

  it("stores nothing of a run whose model call failed, and sends the next run without it", async () => {
    const store = new MemorySessionStore();
    const session = governed(store);
    const model = new ReadingModel();
    const agent = new Agent({ name: "reader", instructions: "Read, then answer.", model, tools: [readFile] });
    await run(agent, "First question", { session, callModelInputFilter: session.callModelInputFilter });
    const stored = await store.loadMessages("agents-1", { strategy: "all" });
    const failing = new Agent({
      name: "reader",
      instructions: "Read, then answer.",
      model: {
        getResponse: async (request: ModelRequest) => {
          if (model.inputs.length === 3) {
            model.inputs.push([]);
            throw new Error("503 overloaded");
          }
          return model.getResponse(request);
        },
        getStreamedResponse: () => model.getStreamedResponse(),
      },
      tools: [readFile],
    });
    await expect(
      run(failing, "Doomed question", { session, callModelInputFilter: session.callModelInputFilter }),
    ).rejects.toThrow(/503/);
    expect(await store.loadMessages("agents-1", { strategy: "all" })).toEqual(stored);
    await run(agent, "Second question", { session, callModelInputFilter: session.callModelInputFilter });
    expect(JSON.stringify(model.inputs.at(-1))).not.toContain("Doomed");
    expect(JSON.stringify(model.inputs.at(-1))).toContain("First question");
  });
  it("stores system items and sends them first, as the session's system prompt", async () => {
    const store = new MemorySessionStore();
    const session = governed(store);
    await session.addItems([
      { role: "user", content: "hi" },
      { role: "system", content: "Answer in French." },
      { role: "user", content: "and now?" },
    ]);
    expect(await session.getItems()).toEqual([
      { role: "system", content: "Answer in French." },
      { role: "user", content: "hi" },
      { role: "user", content: "and now?" },
    ]);
    expect((await storedItems(store))[1]).toEqual({ role: "system", content: "Answer in French." });
  });
  it("takes back a write another process beat it to, and goes on from what the store holds", async () => {
    const store = new MemorySessionStore();
    const first = governed(store);
    const second = governed(store);
    await first.addItems([{ role: "user", content: "one" }]);
    expect(await second.getItems()).toEqual([{ role: "user", content: "one" }]);
    await first.addItems([{ role: "user", content: "two" }]);
    await expect(second.addItems([{ role: "user", content: "late" }])).rejects.toBeInstanceOf(
      ConcurrentWriteError,
    );
    expect(await second.getItems()).toEqual([
      { role: "user", content: "one" },
      { role: "user", content: "two" },
    ]);
    await second.addItems([{ role: "user", content: "three" }]);
    expect((await storedItems(store)).map((item) => ("content" in item ? item.content : ""))).toEqual([
      "one",
      "two",
      "three",
    ]);
  });
});
