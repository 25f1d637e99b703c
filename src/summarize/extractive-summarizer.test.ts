import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../errors/errors.ts";
import { messageFacts } from "../metrics/facts.ts";
import { scoreRetention } from "../metrics/retention.ts";
import type { Message } from "../model/message.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { HistoryBuilder, type ScriptedCall } from "../test/history-builder.ts";
import { createExtractiveSummarizer } from "./extractive-summarizer.ts";
import { parseSnapshot } from "./snapshot-sections.ts";

const counter = new FakeTokenCounter({ charsPerToken: 4 });
const summarizer = createExtractiveSummarizer({ counter });

function factKeys(messages: readonly Message[]): Set<string> {
  return new Set(messages.flatMap((message) => messageFacts(message).map((fact) => fact.key)));
}

/** A realistic bug-fix session: read, failing test, edit, passing test, todo list, conclusion. */
function bugFixSession(): Message[] {
  return new HistoryBuilder()
    .user("The CSV export drops the last row. Fix it in src/export/csv.ts and do not change the public API.")
    .step([
      {
        name: "TodoWrite",
        input: {
          todos: [
            { content: "Reproduce the bug", status: "in_progress" },
            { content: "Fix the off-by-one", status: "pending" },
            { content: "Run the test suite", status: "pending" },
          ],
        },
        output: "Todos updated",
      },
    ])
    .step([{ name: "Read", input: { file_path: "src/export/csv.ts" }, output: "export function toCsv() {}" }])
    .step([
      {
        name: "Bash",
        input: { command: "npm test -- csv" },
        output: "FAIL src/export/csv.test.ts\nAssertionError: expected 2 rows, got 1\nExit code 1",
        isError: true,
      },
    ])
    .step([
      {
        name: "Edit",
        input: { file_path: "src/export/csv.ts", old_string: "i < n - 1", new_string: "i < n" },
        output: "The file src/export/csv.ts has been updated.",
      },
    ])
    .step([{ name: "Read", input: { file_path: "src/export/csv.ts" }, output: "export function toCsv() {}" }])
    .step([{ name: "Bash", input: { command: "npm test -- csv" }, output: "Tests: 12 passed" }])
    .step([
      {
        name: "TodoWrite",
        input: {
          todos: [
            { content: "Reproduce the bug", status: "completed" },
            { content: "Fix the off-by-one", status: "completed" },
            { content: "Update the changelog", status: "pending" },
          ],
        },
        output: "Todos updated",
      },
    ])
    .reply("Fixed: the loop in src/export/csv.ts stopped one row early. All 12 tests pass.")
    .build();
}

describe("createExtractiveSummarizer", () => {
  it("quotes the newest code of each recently edited file when the budget allows, and gives it up first", async () => {
    const builder = new HistoryBuilder().user("Split the exporter into three modules");
    for (const name of ["csvWriter", "jsonWriter", "xmlWriter"])
      builder.step([
        {
          name: "Write",
          input: {
            file_path: `src/export/${name}.ts`,
            content: `export function ${name}(rows: Row[]) {\n  return rows;\n}`,
          },
          output: "ok",
        },
      ]);
    const messages = builder.build();
    const roomy = await summarizer.summarize({ messages, maxTokens: 2_000 });
    for (const name of ["csvWriter", "jsonWriter", "xmlWriter"])
      expect(roomy).toContain(`export function ${name}(rows: Row[]) {`);
    // Tight: the older files' code goes before the instruction and the newest change.
    const tight = await summarizer.summarize({ messages, maxTokens: 120 });
    expect(tight).toContain("Split the exporter into three modules");
    expect(tight).toContain("export function xmlWriter(rows: Row[]) {");
    expect(tight).not.toContain("export function csvWriter(rows: Row[]) {");
  });

  it("writes the snapshot sections with instructions, files, counted actions, fixes, plan and replies", async () => {
    const summary = await summarizer.summarize({ messages: bugFixSession(), maxTokens: 2_000 });
    const sections = parseSnapshot(summary);
    expect(sections.get("goal")).toEqual([
      "The CSV export drops the last row. Fix it in src/export/csv.ts and do not change the public API.",
    ]);
    expect(sections.get("files")).toContain("src/export/csv.ts (Read ×2, Edit)");
    expect(sections.get("actions")).toEqual([
      "TodoWrite() ×2",
      "Read(src/export/csv.ts) ×2",
      "Bash(npm test -- csv) ×2",
      "Edit(src/export/csv.ts)",
    ]);
    expect(sections.get("errors")).toContain(
      "Bash(npm test -- csv) failed: AssertionError: expected 2 rows, got 1 — fixed later",
    );
    expect(sections.get("state")).toEqual([
      "[x] Reproduce the bug",
      "[x] Fix the off-by-one",
      "Reply: Fixed: the loop in src/export/csv.ts stopped one row early. All 12 tests pass.",
      "Latest change to src/export/csv.ts:\ni < n",
    ]);
    expect(sections.get("next")).toEqual(["[ ] Update the changelog"]);
    expect(summary).not.toContain("_Omitted");
  });

  it("keeps the opening of an instruction in between, and gives up what it pasted before the files touched", async () => {
    const pasted = Array.from({ length: 40 }, (_, step) => `=== Step ${step}: checking metadata ===`).join(
      "\n",
    );
    const messages = new HistoryBuilder()
      .user("Write an end-to-end script for the attribution in scripts/e2e.sh")
      .step([{ name: "Write", input: { file_path: "scripts/e2e.sh", content: "set -e" }, output: "ok" }])
      .user(`The script does not check the metadata. Its output:\n${pasted}`)
      .step([{ name: "Read", input: { file_path: "cmd/metadata.go" }, output: "package cmd" }])
      .user("Now run it again")
      .build();
    const roomy = await summarizer.summarize({ messages, maxTokens: 2_000 });
    expect(roomy).toContain("=== Step 39: checking metadata ===");
    const tight = await summarizer.summarize({ messages, maxTokens: 170 });
    expect(tight).toContain("The script does not check the metadata. Its output:");
    expect(tight).toContain("cmd/metadata.go (Read)");
    expect(tight).not.toContain("=== Step 7: checking metadata ===");
    expect(tight).not.toContain("=== Step 38: checking metadata ===");
  });

  it("keeps every fact of the range when the budget allows", async () => {
    const messages = bugFixSession();
    const summary = await summarizer.summarize({ messages, maxTokens: 2_000 });
    expect(scoreRetention(factKeys(messages), summary)).toBe(1);
  });

  it("lists a path only mentioned inside a longer listed path once", async () => {
    const messages = new HistoryBuilder()
      .user("check the parser")
      .step([{ name: "Read", input: { file_path: "/repo/src/parser.ts" }, output: "export const a = 1;" }])
      .step([
        {
          name: "Grep",
          input: { pattern: "parse" },
          output: "src/parser.ts:3: parse()\nlib/other.ts:9: parse()",
        },
      ])
      .build();
    const files = parseSnapshot(await summarizer.summarize({ messages, maxTokens: 2_000 })).get("files");
    expect(files).toEqual(["/repo/src/parser.ts (Read)", "lib/other.ts"]);
  });

  it("lists no noise as files: paths inside a file's text, routes, string fragments, lists of extensions", async () => {
    const messages = new HistoryBuilder()
      .user("look at the handler")
      .step([
        {
          name: "Read",
          input: { file_path: "lib/app/handler.ex" },
          output:
            'socket "/socket"\nassert_files("file1.txt\\nfile2.txt")\n# handles .ex/.exs\npath = "/tmp/example/foo.ex"',
        },
      ])
      .step([
        {
          name: "Bash",
          input: { command: "curl localhost:4000/heatmap && mix test test/app_test.exs" },
          output: "ok",
        },
      ])
      .build();
    const files = parseSnapshot(await summarizer.summarize({ messages, maxTokens: 2_000 })).get("files");
    expect(files).toEqual(["lib/app/handler.ex (Read)", "test/app_test.exs (Bash)"]);
  });

  it("keeps the approved plan, the decisions and why (not the rows of a table of options), and the names each edit declared", async () => {
    const messages = new HistoryBuilder()
      .user("Make the importer resumable")
      .step([
        {
          name: "ExitPlanMode",
          input: { plan: "1. Record the last imported line\n2. Skip lines up to it on restart" },
          output: "User has approved your plan.",
        },
      ])
      .step(
        [
          {
            name: "Edit",
            input: {
              file_path: "src/importer.ts",
              old_string: "export function importAll() {}",
              new_string:
                "export function importAll() {}\nexport async function resumeImport(from: number) {}",
            },
            output: "ok",
          },
        ],
        "| Approach | Effort |\n| --- | --- |\n| A checkpoint file instead of a table | low |\n\n" +
          "I'll use a checkpoint file instead of a database table because the importer runs before the database exists.",
      )
      .build();
    const sections = parseSnapshot(await summarizer.summarize({ messages, maxTokens: 2_000 }));
    expect(sections.get("goal")).toContain(
      "Approved plan: 1. Record the last imported line\n2. Skip lines up to it on restart",
    );
    expect(sections.get("decisions")).toEqual([
      "I'll use a checkpoint file instead of a database table because the importer runs before the database exists.",
    ]);
    expect(sections.get("changes")).toEqual(["src/importer.ts: importAll, resumeImport"]);
  });

  it("is deterministic", async () => {
    const messages = bugFixSession();
    const first = await summarizer.summarize({ messages, maxTokens: 150 });
    const second = await createExtractiveSummarizer({ counter }).summarize({ messages, maxTokens: 150 });
    expect(second).toBe(first);
  });

  it("reports an unresolved failure as unresolved", async () => {
    const messages = new HistoryBuilder()
      .user("Make the build pass.")
      .step([
        { name: "Bash", input: { command: "make" }, output: "fatal error: x.h: No such file", isError: true },
      ])
      .build();
    const summary = await summarizer.summarize({ messages, maxTokens: 500 });
    expect(parseSnapshot(summary).get("errors")).toEqual([
      "Bash(make) failed: fatal error: x.h: No such file — unresolved",
    ]);
  });

  it("takes the plan from update_plan or from a checklist in the assistant's text", async () => {
    const codex = new HistoryBuilder()
      .user("Port the parser.")
      .step([
        {
          name: "update_plan",
          input: {
            plan: [
              { step: "Write the grammar", status: "completed" },
              { step: "Port", status: "in_progress" },
            ],
          },
          output: "Plan updated",
        },
      ])
      .build();
    expect(
      parseSnapshot(await summarizer.summarize({ messages: codex, maxTokens: 500 })).get("next"),
    ).toEqual(["[in progress] Port"]);
    const checklist = new HistoryBuilder()
      .user("Port the parser.")
      .reply("Plan:\n- [x] grammar\n- [ ] lexer\n- [ ] tests")
      .build();
    const sections = parseSnapshot(await summarizer.summarize({ messages: checklist, maxTokens: 500 }));
    expect(sections.get("state")?.[0]).toBe("[x] grammar");
    expect(sections.get("next")).toEqual(["[ ] lexer", "[ ] tests"]);
  });

  it("stays within any budget, dropping the least important items first and saying so", async () => {
    const messages = bugFixSession();
    for (const maxTokens of [20, 60, 90, 120, 200, 400]) {
      const summary = await summarizer.summarize({ messages, maxTokens });
      expect(counter.countText(summary)).toBeLessThanOrEqual(maxTokens);
    }
    const tight = await summarizer.summarize({ messages, maxTokens: 120 });
    expect(tight).toMatch(/_Omitted to fit the budget: .*mentioned files/);
    expect(parseSnapshot(tight).get("goal")?.[0]).toContain("The CSV export drops the last row.");
    expect(parseSnapshot(tight).get("files")).toBeUndefined();
  });

  it("keeps items on the focus longer than others of the same kind", async () => {
    const builder = new HistoryBuilder().user("Tidy up the repository.");
    for (const name of ["alpha", "beta", "parser", "gamma", "delta"]) {
      builder.step([{ name: "Read", input: { file_path: `src/${name}/index.ts` }, output: "ok" }]);
    }
    const messages = builder.build();
    const full = await summarizer.summarize({ messages, maxTokens: 1_000 });
    // The largest budget at which the unfocused summary gives up the parser's action.
    let maxTokens = counter.countText(full);
    let plain = full;
    while (plain.includes("Read(src/parser/index.ts)")) {
      plain = await summarizer.summarize({ messages, maxTokens: --maxTokens });
    }
    const focused = await summarizer.summarize({ messages, maxTokens, focus: "the parser" });
    expect(focused).toContain("Read(src/parser/index.ts)");
    expect(counter.countText(focused)).toBeLessThanOrEqual(maxTokens);
  });

  it("validates the request and honours an aborted signal", async () => {
    await expect(summarizer.summarize({ messages: [], maxTokens: 0 })).rejects.toBeInstanceOf(
      ValidationError,
    );
    const controller = new AbortController();
    controller.abort(new Error("stop"));
    await expect(
      summarizer.summarize({ messages: bugFixSession(), maxTokens: 100, signal: controller.signal }),
    ).rejects.toThrow("stop");
  });

  it("never exceeds the budget for any history (property)", async () => {
    const call: fc.Arbitrary<ScriptedCall> = fc.record({
      name: fc.constantFrom("Read", "Bash", "Edit", "Grep"),
      input: fc.record({ file_path: fc.constantFrom("src/a.ts", "lib/b/c.py", "./run.sh", "/etc/hosts") }),
      output: fc.string({ maxLength: 300 }).map((text) => `${text}\nError: ${text.slice(0, 20)}`),
      isError: fc.boolean(),
    });
    const turn = fc.record({
      instruction: fc.string({ minLength: 1, maxLength: 400 }),
      steps: fc.array(fc.array(call, { minLength: 1, maxLength: 3 }), { maxLength: 4 }),
      reply: fc.string({ maxLength: 200 }),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(turn, { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 5, max: 600 }),
        async (turns, maxTokens) => {
          const builder = new HistoryBuilder();
          for (const { instruction, steps, reply } of turns) {
            builder.user(instruction);
            for (const step of steps) builder.step(step);
            if (reply) builder.reply(reply);
          }
          const summary = await summarizer.summarize({ messages: builder.build(), maxTokens });
          expect(counter.countText(summary)).toBeLessThanOrEqual(maxTokens);
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe("incremental summaries", () => {
  const session = bugFixSession();
  const firstRange = session.slice(0, 8);
  const secondRange = session.slice(8);

  it("keeps the previous summary's facts, adds the new ones and adds up counts", async () => {
    const first = await summarizer.summarize({ messages: firstRange, maxTokens: 2_000 });
    expect(first).toContain(
      "Bash(npm test -- csv) failed: AssertionError: expected 2 rows, got 1 — unresolved",
    );
    const second = await summarizer.summarize({
      messages: secondRange,
      maxTokens: 2_000,
      previousSummary: first,
    });
    expect(scoreRetention(factKeys(session), second)).toBe(1);
    const sections = parseSnapshot(second);
    expect(sections.get("actions")).toContain("Read(src/export/csv.ts) ×2");
    expect(sections.get("actions")).toContain("Bash(npm test -- csv) ×2");
    expect(sections.get("errors")).toContain(
      "Bash(npm test -- csv) failed: AssertionError: expected 2 rows, got 1 — fixed later",
    );
    expect(sections.get("next")).toEqual(["[ ] Update the changelog"]);
  });

  it("merging in two steps gives what one pass over everything gives, item for item", async () => {
    const first = await summarizer.summarize({ messages: firstRange, maxTokens: 2_000 });
    const merged = parseSnapshot(
      await summarizer.summarize({ messages: secondRange, maxTokens: 2_000, previousSummary: first }),
    );
    const whole = parseSnapshot(await summarizer.summarize({ messages: session, maxTokens: 2_000 }));
    for (const key of ["goal", "files", "actions", "errors", "next"] as const) {
      expect(merged.get(key)).toEqual(whole.get(key));
    }
  });

  it("keeps a foreign previous summary under Earlier summary, within the budget", async () => {
    const previousSummary = "The user wants CSV export fixed.\nWe agreed to keep the API stable.";
    const summary = await summarizer.summarize({ messages: secondRange, maxTokens: 300, previousSummary });
    expect(parseSnapshot(summary).get("earlier")).toEqual([
      "The user wants CSV export fixed.",
      "We agreed to keep the API stable.",
    ]);
    expect(counter.countText(summary)).toBeLessThanOrEqual(300);
  });
});

describe("summaries inside the range", () => {
  it("are merged like the previous summary, so an older checkpoint's facts survive", async () => {
    const session = bugFixSession();
    const older = await summarizer.summarize({ messages: session.slice(0, 8), maxTokens: 2_000 });
    const summaryMessage: Message = {
      ...session[0]!,
      id: "sum-1",
      kind: "summary",
      content: [{ type: "text", text: `[Summary of 8 earlier messages — background]\n${older}` }],
    };
    const summary = await summarizer.summarize({
      messages: [summaryMessage, ...session.slice(8)],
      maxTokens: 2_000,
      previousSummary: "## Decisions\n- Keep the CSV writer streaming.",
    });
    expect(scoreRetention(factKeys(session), summary)).toBe(1);
    expect(summary).not.toContain("[Summary of 8");
    expect(parseSnapshot(summary).get("decisions")).toEqual(["Keep the CSV writer streaming."]);
  });
});
