import { isInstruction, messageText, toolCallsOf, toolResultText } from "../model/blocks.ts";
import type { JsonValue, Message, ToolResultBlock } from "../model/message.ts";
import { pairToolCalls } from "../model/tool-pairing.ts";
import {
  collapseWhitespace,
  errorLineLabel,
  errorLinesIn,
  filePathsIn,
  normalizeFact,
} from "../metrics/fact-patterns.ts";
import { messageFacts, stringLeaves } from "../metrics/facts.ts";
import { toolCallLabel } from "../metrics/tool-call-label.ts";
import { latestPlan, type PlanItem } from "./plan-state.ts";

/** A tool call that failed, and whether a later call with the same label succeeded. */
export interface FailureRecord {
  readonly label: string;
  /** The first error line of the output (or its first line). */
  readonly error: string;
  readonly resolved: boolean;
}

/** What the extractive summarizer keeps of a range of messages, before it is rendered and fitted. */
export interface HistoryDigest {
  /** User instructions, verbatim, deduplicated. */
  readonly instructions: readonly string[];
  /** Every file path seen → how often each tool touched it (empty when it was only mentioned). */
  readonly files: ReadonlyMap<string, ReadonlyMap<string, number>>;
  /** Tool call labels (`name(primary argument)`) → how often they were called. */
  readonly actions: ReadonlyMap<string, number>;
  readonly failures: readonly FailureRecord[];
  /** Labels of the tool calls that succeeded at least once. */
  readonly succeeded: ReadonlySet<string>;
  /** Error lines seen anywhere, in order. */
  readonly errorLines: readonly string[];
  /** The newest plan or todo list, if any. */
  readonly plan: readonly PlanItem[] | undefined;
  /** The final assistant text of the last few turns, oldest first. */
  readonly conclusions: readonly string[];
}

/** Limits of `digestHistory`. */
export interface DigestLimits {
  readonly maxConclusionChars: number;
  readonly conclusionTurns: number;
}

/** Arguments that name what a call acts on; paths inside other arguments (file contents, prompts) are mentions. */
const TARGET_KEYS = new Set([
  "command",
  "cmd",
  "file_path",
  "filePath",
  "absolute_path",
  "path",
  "paths",
  "dir_path",
  "notebook_path",
  "file_name",
  "filename",
]);
const PATCH_FILE_LINE = /^\*\*\* (?:Add|Update|Delete) File: (.+)$/gm;

/**
 * The files a tool call acts on: paths in its target arguments (commands, file and directory arguments), or in
 * the file headers of a free-form patch.
 *
 * @example
 * touchedPaths({ file_path: "src/a.ts", content: "see lib/b.ts" }) // ["src/a.ts"]
 */
export function touchedPaths(input: JsonValue): string[] {
  if (typeof input === "string") {
    return [...input.matchAll(PATCH_FILE_LINE)].map((match) => match[1]!.trim());
  }
  if (input === null || typeof input !== "object" || Array.isArray(input)) return [];
  const paths = new Set<string>();
  for (const [key, value] of Object.entries(input)) {
    if (!TARGET_KEYS.has(key)) continue;
    for (const text of stringLeaves(value)) {
      const found = filePathsIn(text);
      // A bare file argument without a directory (`README.md`) is still the file the call acts on.
      if (found.length === 0 && key !== "command" && key !== "cmd" && /^[^\s]+\.\w+$/.test(text.trim())) {
        found.push(text.trim());
      }
      for (const path of found) paths.add(path);
    }
  }
  return [...paths];
}

const EXIT_CODE = /\b(?:exit(?:ed with)? code|exit status)[:\s]+[1-9]\d*/i;

/**
 * True when a tool result reports a failure: flagged as an error, or a non-zero exit code near its start.
 *
 * @example
 * isFailedResult({ type: "tool-result", callId: "1", toolName: "Bash", content: "Exit code 1\n…" }) // true
 */
export function isFailedResult(result: ToolResultBlock): boolean {
  return result.isError === true || EXIT_CODE.test(toolResultText(result.content).slice(0, 500));
}

/** Clips `text` to `limit` characters, marking the cut. */
export function clip(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, Math.max(0, limit - 2)).trimEnd()} […]`;
}

/**
 * Collects what a summary of `messages` must keep: instructions, files, actions, failures and their fixes,
 * error lines, the newest plan and the final replies. Deterministic; summaries and markers in the range are
 * skipped (the caller passes the previous summary separately).
 *
 * @example
 * const digest = digestHistory(messages, { maxConclusionChars: 500, conclusionTurns: 3 });
 * digest.actions.get("Read(src/a.ts)") // 3
 */
export function digestHistory(messages: readonly Message[], limits: DigestLimits): HistoryDigest {
  const own = messages.filter((message) => message.kind === undefined);
  const instructions = new Map<string, string>();
  const files = new Map<string, Map<string, number>>();
  const actions = new Map<string, number>();
  const errorLines = new Map<string, string>();
  const finalReplyByTurn = new Map<number, string>();
  for (const message of own) {
    if (isInstruction(message)) {
      const text = messageText(message).trim();
      if (text) instructions.set(normalizeFact(text), text);
    }
    for (const fact of messageFacts(message)) {
      if (fact.kind === "file-path" && !files.has(fact.text)) files.set(fact.text, new Map());
      if (fact.kind === "error-line" && !errorLines.has(fact.key)) errorLines.set(fact.key, fact.text);
    }
    for (const call of toolCallsOf(message)) {
      const label = toolCallLabel(call);
      actions.set(label, (actions.get(label) ?? 0) + 1);
      for (const path of touchedPaths(call.input)) {
        const uses = files.get(path) ?? new Map<string, number>();
        uses.set(call.name, (uses.get(call.name) ?? 0) + 1);
        files.set(path, uses);
      }
    }
    const reply = message.role === "assistant" ? messageText(message).trim() : "";
    if (reply) finalReplyByTurn.set(message.turn, clip(collapseWhitespace(reply), limits.maxConclusionChars));
  }
  return {
    instructions: [...instructions.values()],
    files,
    actions,
    ...failuresOf(own),
    errorLines: [...errorLines.values()],
    plan: latestPlan(own),
    conclusions: [...finalReplyByTurn.values()].slice(-limits.conclusionTurns),
  };
}

function failuresOf(messages: readonly Message[]): {
  failures: FailureRecord[];
  succeeded: Set<string>;
} {
  const failures = new Map<string, FailureRecord>();
  const succeeded = new Set<string>();
  for (const { call, result } of pairToolCalls(messages).pairs) {
    if (result === undefined) continue;
    const label = toolCallLabel(call);
    if (!isFailedResult(result)) {
      succeeded.add(label);
      for (const [key, failure] of failures) {
        if (failure.label === label) failures.set(key, { ...failure, resolved: true });
      }
      continue;
    }
    const output = toolResultText(result.content);
    const firstLine = output.split("\n").find((line) => line.trim() !== "") ?? "(no output)";
    const error = errorLinesIn(output)[0] ?? errorLineLabel(firstLine);
    const key = `${label}\n${normalizeFact(error)}`;
    failures.delete(key);
    failures.set(key, { label, error, resolved: false });
  }
  return { failures: [...failures.values()], succeeded };
}
