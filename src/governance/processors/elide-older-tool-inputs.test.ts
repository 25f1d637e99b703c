import { describe, expect, it } from "vitest";
import { toolCallLabel } from "../../metrics/tool-call-label.ts";
import { sequentialIds } from "../../model/ids.ts";
import type { Message, ToolCallBlock } from "../../model/message.ts";
import { FakeSummarizer } from "../../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../../test/fake-token-counter.ts";
import { HistoryBuilder } from "../../test/history-builder.ts";
import type { GovernanceEvent } from "../events.ts";
import { createGovernor } from "../governor.ts";
import { MemoryOffloadStore } from "../offload-store.ts";
import type { ProcessorContext } from "../processor.ts";
import { resolveGovernorSettings, type GovernorSettingsInput } from "../governor-settings.ts";
import { preset } from "../presets.ts";
import { createRecallTool } from "../recall-tool.ts";
import { createElideOlderToolInputs } from "./elide-older-tool-inputs.ts";

const elideOlderToolInputs = createElideOlderToolInputs({ aboveTokens: 250 });

const fileContent = (label: string, lines: number) =>
  Array.from({ length: lines }, (_, line) => `${label} line ${line}: const value${line} = ${line};`).join(
    "\n",
  );

function context(settings: GovernorSettingsInput, emit: (event: GovernanceEvent) => void = () => {}) {
  const counter = new FakeTokenCounter();
  return {
    // The mechanics with nothing held back as still needed (neededContext has its own tests).
    settings: resolveGovernorSettings({ groundingTarget: 0, ...settings }),
    window: { contextWindow: 100_000, reservedOutput: 4_000, usable: 96_000 },
    fixedTokens: 0,
    tokensOf: (message: Message) => counter.countMessage(message),
    summarizer: new FakeSummarizer(),
    offloadStore: new MemoryOffloadStore(),
    guard: {},
    force: false,
    ids: sequentialIds(),
    clock: () => new Date("2026-01-01T00:00:00Z"),
    emit,
  } satisfies ProcessorContext;
}

function calls(messages: readonly Message[]): ToolCallBlock[] {
  return messages.flatMap((message) =>
    message.content.filter((block): block is ToolCallBlock => block.type === "tool-call"),
  );
}

/** A run that writes two big files, then runs the tests (a small step). */
function writingRun(): Message[] {
  return new HistoryBuilder()
    .user("write the parser and its tests")
    .step([
      {
        name: "Write",
        input: { file_path: "src/parser.ts", content: fileContent("parser", 200) },
        output: "File created successfully at: src/parser.ts",
      },
    ])
    .step([
      {
        name: "Write",
        input: { file_path: "src/parser.test.ts", content: fileContent("test", 200) },
        output: "File created successfully at: src/parser.test.ts",
      },
    ])
    .step([{ name: "Bash", input: { command: "npm test" }, output: "2 passed" }])
    .build();
}

describe("elideOlderToolInputs", () => {
  it("shortens long arguments of older calls to a recallable preview, keeping name, id and primary argument", async () => {
    const events: GovernanceEvent[] = [];
    const ctx = context({ protectTokens: 0 }, (event) => events.push(event));
    const history = writingRun();
    const output = await elideOlderToolInputs.process(history, ctx);

    const before = calls(history);
    const after = calls(output);
    expect(after.map((call) => [call.id, call.name])).toEqual(before.map((call) => [call.id, call.name]));
    expect(after.map(toolCallLabel)).toEqual(before.map(toolCallLabel));
    for (const [index, call] of after.slice(0, 2).entries()) {
      const input = call.input as { file_path: string; content: string };
      const original = (before[index]!.input as { content: string }).content;
      expect(input.file_path).toBe((before[index]!.input as { file_path: string }).file_path);
      expect(input.content.length).toBeLessThan(original.length / 4);
      expect(input.content).toContain(original.split("\n")[0]);
      const ref = /recall_tool_output\("([^"]+)"\)/.exec(input.content)?.[1];
      expect(ref).toBeDefined();
      const page = await createRecallTool(ctx.offloadStore).execute({ ref: ref!, offset: 0, limit: 100_000 });
      expect(page).toContain(original);
    }
    // The newest step is never touched, and nothing else about the messages changed.
    expect(output.at(-2)).toBe(history.at(-2));
    expect(output.map((message) => [message.id, message.role])).toEqual(
      history.map((message) => [message.id, message.role]),
    );
    expect(events.map((event) => event.type)).toEqual(["tool-inputs-elided"]);
    expect(events[0]!.tokensAfter).toBeLessThan(events[0]!.tokensBefore);
  });

  it("keeps error lines and file paths of an elided argument in its preview", async () => {
    const body = [
      ...fileContent("head", 5).split("\n"),
      ...Array.from({ length: 80 }, (_, line) => `  filler ${line} ${"x".repeat(30)}`),
      "  throw new Error('parser failed on empty input');",
      "  import { lex } from './lib/lexer.ts';",
      ...Array.from({ length: 80 }, (_, line) => `  filler ${line + 80} ${"y".repeat(30)}`),
    ].join("\n");
    const history = new HistoryBuilder()
      .user("fix it")
      .step([{ name: "Write", input: { file_path: "src/p.ts", content: body }, output: "ok" }])
      .step([{ name: "Bash", input: { command: "npm test" }, output: "ok" }])
      .build();
    const output = await elideOlderToolInputs.process(history, context({ protectTokens: 0 }));
    const content = (calls(output)[0]!.input as { content: string }).content;
    expect(content).toContain("throw new Error('parser failed on empty input');");
    expect(content).toContain("./lib/lexer.ts");
    expect(content).not.toContain("filler 100");
  });

  it("leaves calls inside the protection window, short arguments, and already elided ones alone", async () => {
    const history = writingRun();
    const ctx = context({ protectTokens: 50_000 });
    expect(await elideOlderToolInputs.process(history, ctx)).toBe(history);

    const short = new HistoryBuilder()
      .user("tiny edits")
      .step([{ name: "Edit", input: { file_path: "a.ts", old_string: "a", new_string: "b" }, output: "ok" }])
      .step([{ name: "Bash", input: { command: "npm test" }, output: "ok" }])
      .build();
    expect(await elideOlderToolInputs.process(short, context({ protectTokens: 0 }))).toBe(short);

    const once = await elideOlderToolInputs.process(history, context({ protectTokens: 0 }));
    expect(await elideOlderToolInputs.process(once, context({ protectTokens: 0 }))).toBe(once);
  });

  it("elides only what edit and write calls carry: a subagent's brief or a long command exists nowhere else", async () => {
    const brief = fileContent("brief", 200);
    const script = fileContent("script", 200);
    const history = new HistoryBuilder()
      .user("port the segments")
      .step([{ name: "Task", input: { description: "port", prompt: brief }, output: "done" }])
      .step([{ name: "Bash", input: { command: "sh -c", script }, output: "ok" }])
      .step([
        {
          name: "Write",
          input: { file_path: "src/port.ts", content: fileContent("port", 200) },
          output: "ok",
        },
      ])
      .step([{ name: "Bash", input: { command: "npm test" }, output: "ok" }])
      .build();
    const output = await elideOlderToolInputs.process(history, context({ protectTokens: 0 }));
    const [task, bash, write] = calls(output);
    expect((task!.input as { prompt: string }).prompt).toBe(brief);
    expect((bash!.input as { script: string }).script).toBe(script);
    expect((write!.input as { content: string }).content.length).toBeLessThan(brief.length / 4);
  });

  it("is left out of a preset's pipeline by elideToolInputsAbove: 0", () => {
    const names = preset("default", { elideToolInputsAbove: 0 }).processors.map(
      (processor) => processor.name,
    );
    expect(names).not.toContain("elide-older-tool-inputs");
    expect(names).toContain("offload-tool-outputs");
  });

  it("lets the governor take a checkpoint for piled-up tool inputs alone, and keeps the history untouched", async () => {
    const events: GovernanceEvent[] = [];
    const governor = createGovernor({
      contextWindow: 200_000,
      counter: new FakeTokenCounter(),
      summarizer: new FakeSummarizer(),
      pipeline: preset("default", {
        offloadProtectTokens: 1_000,
        offloadMinPrunableTokens: 1_000,
        cacheAware: false,
        groundingTarget: 0,
      }),
      onEvent: (event) => events.push(event),
    });
    const history = writingRun();
    const snapshot = JSON.stringify(history);
    const request = await governor.prepare(history);
    expect(request.checkpoint).toBe(true);
    expect(events.map((event) => event.type)).toContain("tool-inputs-elided");
    expect(request.tokens.messages).toBeLessThan(
      history.reduce((sum, message) => sum + new FakeTokenCounter().countMessage(message), 0) / 2,
    );
    expect(JSON.stringify(history)).toBe(snapshot);
  });
});
