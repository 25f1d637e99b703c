import { describe, expect, it } from "vitest";
import type { Message } from "../model/message.ts";
import { HistoryBuilder } from "../test/history-builder.ts";
import { errorLinesIn, filePathsIn, instructionSentences, normalizeFact } from "./fact-patterns.ts";
import { messageFacts, messageScoringText } from "./facts.ts";
import { primaryArgument, toolCallLabel } from "./tool-call-label.ts";

describe("file paths", () => {
  it("finds paths with a separator and an extension, and ./ ~/ / prefixed ones", () => {
    const text = [
      "Edited src/parser/lexer.ts and lib\\util\\io.cs; see ./scripts/run",
      "config in ~/.config/app and the binary /usr/local/bin/node.",
    ].join("\n");
    expect(filePathsIn(text)).toEqual([
      "src/parser/lexer.ts",
      "lib\\util\\io.cs",
      "./scripts/run",
      "~/.config/app",
      "/usr/local/bin/node",
    ]);
  });

  it("strips line:column suffixes, sentence punctuation and quotes", () => {
    expect(filePathsIn('error at "src/a.ts:12:5", then (lib/b.py:3).')).toEqual(["src/a.ts", "lib/b.py"]);
  });

  it("skips words with slashes but no extension, fractions, comments, regexes, tags and web URLs", () => {
    const text = "and/or 1/2.5 2024/01/02 // note .replace(/\\s+/g) <b>x</b> https://example.com/page.html";
    expect(filePathsIn(text)).toEqual([]);
  });

  it("keeps the path of a file:// link (editor links in assistant text)", () => {
    expect(filePathsIn("[index.html](cci:1://file:///Users/me/site/index.html:0:0-0:0)")).toEqual([
      "/Users/me/site/index.html",
    ]);
  });

  it("lists each path once", () => {
    expect(filePathsIn("src/a.ts src/a.ts src/a.ts:4")).toEqual(["src/a.ts"]);
  });
});

describe("error lines", () => {
  it("keeps lines mentioning error, exception, traceback, failed or fatal (any case)", () => {
    const text = [
      "ok 1",
      "TypeError: cannot read properties of undefined",
      "Traceback (most recent call last):",
      "  FAILED tests/test_a.py::test_x",
      "fatal: not a git repository",
      "RuntimeException thrown",
      "all good",
    ].join("\n");
    expect(errorLinesIn(text)).toEqual([
      "TypeError: cannot read properties of undefined",
      "Traceback (most recent call last):",
      "FAILED tests/test_a.py::test_x",
      "fatal: not a git repository",
      "RuntimeException thrown",
    ]);
  });

  it("collapses whitespace and keeps the first 120 characters, trimmed", () => {
    const long = `Error:   ${"x".repeat(200)}`;
    const [line] = errorLinesIn(long);
    expect(line).toBe(`Error: ${"x".repeat(113)}`);
    expect(line).toHaveLength(120);
    expect(errorLinesIn(`Error: ${"y".repeat(112)}          z`)).toEqual([`Error: ${"y".repeat(112)}`]);
  });
});

describe("tool calls", () => {
  it("prefers command, file and search arguments over the rest", () => {
    expect(primaryArgument({ description: "list", command: "ls -la" })).toBe("ls -la");
    expect(primaryArgument({ old_string: "a", file_path: "src/a.ts" })).toBe("src/a.ts");
    expect(primaryArgument({ output_mode: "content", pattern: "TODO", path: "src" })).toBe("src");
    expect(primaryArgument({ cmd: ["bash", "-lc", "npm test"] })).toBe("bash -lc npm test");
  });

  it("falls back to the first string argument, or the input itself when it is a string", () => {
    expect(primaryArgument({ limit: 3, reservation_id: "ZFA04Y" })).toBe("ZFA04Y");
    expect(primaryArgument("*** Begin Patch\n*** Update File: a.ts")).toBe(
      "*** Begin Patch *** Update File: a.ts",
    );
    expect(primaryArgument({ limit: 3 })).toBeUndefined();
    expect(primaryArgument(null)).toBeUndefined();
  });

  it("labels a call name(primary argument), collapsed, long ones cut in the middle to 100 characters", () => {
    expect(toolCallLabel({ name: "Bash", input: { command: "npm   test\n" } })).toBe("Bash(npm test)");
    expect(toolCallLabel({ name: "TaskList", input: {} })).toBe("TaskList()");
    const path = `/home/user/${"deep/".repeat(30)}session_live.ex`;
    const argument = primaryArgument({ file_path: path })!;
    expect(argument).toHaveLength(100);
    expect(argument).toBe(`${path.slice(0, 50)}…${path.slice(-49)}`);
    expect(argument.endsWith("/session_live.ex")).toBe(true);
  });
});

describe("instruction sentences", () => {
  it("splits at sentence ends and line breaks and keeps 12–200 characters", () => {
    const text = `Fix the failing parser test. Do not touch the lexer!\nOk.\nWhy does it fail?\n${"z".repeat(201)}`;
    expect(instructionSentences(text)).toEqual([
      "Fix the failing parser test.",
      "Do not touch the lexer!",
      "Why does it fail?",
    ]);
  });
});

describe("messageFacts", () => {
  const history = new HistoryBuilder()
    .user("Please fix the build in src/app.ts. Keep the public API unchanged.")
    .step([
      {
        name: "Bash",
        input: { command: "npm run build" },
        output: "src/app.ts:3:1 - error TS2304: Cannot find name 'x'.",
        isError: true,
      },
    ])
    .build();

  it("takes instructions only from user instructions, normalised", () => {
    const facts = messageFacts(history[0]!);
    expect(facts.filter((fact) => fact.kind === "instruction").map((fact) => fact.key)).toEqual([
      "please fix the build in src/app.ts.",
      "keep the public api unchanged.",
    ]);
    expect(facts.filter((fact) => fact.kind === "file-path").map((fact) => fact.text)).toEqual([
      "src/app.ts",
    ]);
  });

  it("takes tool calls from assistant messages and paths and errors from tool results", () => {
    expect(messageFacts(history[1]!).map((fact) => [fact.kind, fact.key])).toEqual([
      ["tool-call", "bash(npm run build)"],
    ]);
    expect(messageFacts(history[2]!).map((fact) => [fact.kind, fact.text])).toEqual([
      ["file-path", "src/app.ts"],
      ["error-line", "src/app.ts:3:1 - error TS2304: Cannot find name 'x'."],
    ]);
  });

  it("does not treat assistant text as instructions, nor reasoning as a source", () => {
    const message: Message = {
      ...history[1]!,
      content: [
        { type: "reasoning", text: "Maybe lib/hidden.ts has the error." },
        { type: "text", text: "I will now rebuild the project carefully." },
      ],
    };
    expect(messageFacts(message)).toEqual([]);
  });

  it("every fact of a message is found in that message's own scoring text", () => {
    for (const message of history) {
      const text = messageScoringText(message);
      for (const fact of messageFacts(message)) expect(text).toContain(fact.key);
      expect(text).toBe(normalizeFact(text));
    }
  });
});
