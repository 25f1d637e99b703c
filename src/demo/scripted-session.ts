import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import type { JsonValue } from "../model/message.ts";

/** One tool call of a scripted agent step and the output it produced. */
export interface ScriptedToolCall {
  readonly name: string;
  readonly input: { readonly [key: string]: JsonValue };
  readonly output: string;
  readonly isError: boolean;
}

/** One model step: optional text and the tool calls it made. */
export interface ScriptedStep {
  readonly text?: string;
  readonly calls: readonly ScriptedToolCall[];
}

/** One user turn of the scripted session. */
export interface ScriptedTurn {
  readonly instruction: string;
  readonly steps: readonly ScriptedStep[];
  readonly reply: string;
}

/** A small deterministic PRNG (mulberry32), so the demo is the same on every machine. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function listFiles(root: string, folder: string): string[] {
  const entries = readdirSync(join(root, folder)).sort();
  const files: string[] = [];
  for (const entry of entries) {
    const path = join(folder, entry);
    if (statSync(join(root, path)).isDirectory()) files.push(...listFiles(root, path));
    else if (/\.(ts|js|md|json)$/.test(entry) && !entry.endsWith(".map")) files.push(path);
  }
  return files;
}

function numbered(text: string): string {
  return text
    .split("\n")
    .map((line, index) => `${String(index + 1).padStart(6)}→${line}`)
    .join("\n");
}

function grep(root: string, files: readonly string[], pattern: RegExp): string {
  const hits: string[] = [];
  for (const file of files) {
    const lines = readFileSync(join(root, file), "utf8").split("\n");
    lines.forEach((line, index) => {
      if (pattern.test(line)) hits.push(`${file}:${index + 1}:${line.trim()}`);
    });
  }
  return hits.length === 0 ? "No matches found" : hits.slice(0, 400).join("\n");
}

function listing(root: string, folder: string): string {
  return readdirSync(join(root, folder))
    .sort()
    .map((entry) => {
      const stats = statSync(join(root, folder, entry));
      return `${stats.isDirectory() ? "d" : "-"}rw-r--r--  ${String(stats.size).padStart(7)}  ${entry}`;
    })
    .join("\n");
}

function testRun(files: readonly string[], failing: string | undefined, random: () => number): string {
  const lines = [`> vitest run`, "", ` RUN  v5.1.1 ${"/work/project"}`, ""];
  let passed = 0;
  for (const file of files) {
    const count = 2 + Math.floor(random() * 12);
    passed += count;
    lines.push(` ✓ ${file} (${count} tests) ${Math.floor(random() * 400)}ms`);
  }
  if (failing) {
    lines.push(
      ` ❯ ${failing} (1 failed)`,
      "",
      ` FAIL  ${failing} > keeps the newest step intact`,
      "AssertionError: expected [ 'user', 'assistant' ] to deeply equal [ 'user', 'assistant', 'tool' ]",
      ` ❯ ${failing}:42:31`,
      "",
      ` Test Files  1 failed | ${files.length - 1} passed (${files.length})`,
      `      Tests  1 failed | ${passed - 1} passed (${passed})`,
      "Error: Process completed with exit code 1.",
    );
  } else {
    lines.push(
      "",
      ` Test Files  ${files.length} passed (${files.length})`,
      `      Tests  ${passed} passed (${passed})`,
    );
  }
  return lines.join("\n");
}

const tasks = [
  {
    goal: "Explain how a request is governed before it is sent",
    folder: "src/governance",
    pattern: /checkpoint/,
  },
  {
    goal: "Find where orphan tool results are repaired and make sure a late result is dropped",
    folder: "src/conversation",
    pattern: /orphan/i,
  },
  {
    goal: "Check that the compaction planner never splits a tool call from its result",
    folder: "src/governance",
    pattern: /segment/i,
  },
  { goal: "Review the message model and list every block type", folder: "src/model", pattern: /type: "/ },
  { goal: "Add a test for the budget-exit notice", folder: "src/governance", pattern: /budget/i },
  { goal: "Document the token counter contract", folder: "src/tokens", pattern: /count/i },
  { goal: "Audit the error hierarchy: every error must have a code", folder: "src/errors", pattern: /code/ },
  { goal: "Trace how prompt sections are ordered", folder: "src/assembly", pattern: /order/i },
  { goal: "Find every place the offload store is used", folder: "src", pattern: /offloadStore/ },
  { goal: "Summarise the CLI commands and their exit codes", folder: "src/cli", pattern: /exit/i },
  { goal: "Look for loops in the loop detector's own tests", folder: "src/governance", pattern: /loop/i },
  { goal: "Prepare release notes from the architecture document", folder: "docs", pattern: /invariant/i },
];

/**
 * A realistic, deterministic coding-agent session over a real source tree (this repository's by default):
 * real file reads, greps and listings, test runs that fail then pass after an edit. Used by `ctxkit demo`.
 *
 * @example
 * const turns = scriptedSession({ root: process.cwd(), seed: 7 });
 */
export function scriptedSession(options: {
  root: string;
  seed?: number;
  turns?: number;
  /** The source folder to explore (default `src`; an installed package has `dist`). */
  sourceFolder?: string;
}): ScriptedTurn[] {
  const random = seededRandom(options.seed ?? 20_261_122);
  const root = options.root;
  const sourceFolder = options.sourceFolder ?? "src";
  const allFiles = listFiles(root, sourceFolder).filter((file) => /\.(ts|js)$/.test(file));
  const testFiles = allFiles.filter((file) => file.endsWith(".test.ts"));
  const turns: ScriptedTurn[] = [];
  const count = Math.min(options.turns ?? tasks.length, tasks.length);
  for (const task of tasks.slice(0, count)) {
    const steps: ScriptedStep[] = [];
    const folder = task.folder;
    const folderInTree = folder.replace(/^src(?=\/|$)/, sourceFolder);
    const inFolder = allFiles.filter((file) => file.startsWith(`${folderInTree}/`));
    const pool = inFolder.length > 0 ? inFolder : allFiles;
    steps.push({
      text: "Let me look at the layout first.",
      calls: [
        {
          name: "list_directory",
          input: { path: folder },
          output: existsSync(join(root, folderInTree))
            ? listing(root, folderInTree)
            : `ls: ${folder}: No such file or directory`,
          isError: !existsSync(join(root, folderInTree)),
        },
      ],
    });
    steps.push({
      calls: [
        {
          name: "grep",
          input: { pattern: task.pattern.source, path: folder },
          output: grep(root, pool, task.pattern),
          isError: false,
        },
      ],
    });
    const reads = 8 + Math.floor(random() * 14);
    for (let read = 0; read < reads; read++) {
      const file = pool[Math.floor(random() * pool.length)]!;
      steps.push({
        calls: [
          {
            name: "read_file",
            input: { path: file },
            output: numbered(readFileSync(join(root, file), "utf8")),
            isError: false,
          },
        ],
      });
    }
    const failing = testFiles[Math.floor(random() * testFiles.length)];
    const suite = testFiles.slice(0, 12);
    steps.push({
      text: "Running the tests before changing anything.",
      calls: [
        {
          name: "bash",
          input: { command: "npm test" },
          output: testRun(suite, failing, random),
          isError: true,
        },
      ],
    });
    const edited = pool[Math.floor(random() * pool.length)]!;
    steps.push({
      calls: [
        {
          name: "edit_file",
          input: { path: edited, old_string: "return messages;", new_string: "return messages; // reviewed" },
          output: `The file ${relative(root, join(root, edited))} has been updated.`,
          isError: false,
        },
      ],
    });
    steps.push({
      calls: [
        {
          name: "bash",
          input: { command: "npm test" },
          output: testRun(suite, undefined, random),
          isError: false,
        },
      ],
    });
    turns.push({
      instruction: task.goal,
      steps,
      reply:
        `Done: ${task.goal.toLowerCase()}. I read ${reads} files under ${folder}, found the failing test in ` +
        `${failing ?? "the suite"}, fixed ${edited}, and the suite passes now.`,
    });
  }
  return turns;
}
