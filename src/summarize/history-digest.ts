import { isInstruction, messageText, toolCallsOf, toolResultText } from "../model/blocks.ts";
import type { JsonValue, Message, ToolCallBlock, ToolResultBlock } from "../model/message.ts";
import { outputKind } from "../metrics/context-kind.ts";
import { pairToolCalls } from "../model/tool-pairing.ts";
import {
  collapseWhitespace,
  errorLineLabel,
  errorLinesIn,
  filePathsIn,
  normalizeFact,
} from "../metrics/fact-patterns.ts";
import { messageFacts, stringLeaves } from "../metrics/facts.ts";
import { distinctiveTokens } from "../metrics/grounding-units.ts";
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
  /** Plans the user approved (a plan-mode exit the user accepted), verbatim, oldest first. */
  readonly approvedPlans: readonly string[];
  /** What the agent decided and why, in its own words (sentences of its text that give a decision or reason). */
  readonly decisions: readonly string[];
  /** File → the names its edits and writes declared (functions, classes, types…), in order. */
  readonly changes: ReadonlyMap<string, readonly string[]>;
  /** The newest edit or write: its file and the text it put there (whole lines, clipped). */
  readonly latestEdit?: { readonly path: string; readonly text: string };
  /**
   * The newest text put in each of the other recently edited files, newest first (at most `RECENT_EDIT_FILES`;
   * whole lines, clipped): the code a continuing agent works on, as an LLM summary quotes it.
   */
  readonly recentEdits: readonly { readonly path: string; readonly text: string }[];
  /** Distinctive names (identifiers) the agent wrote in its own text, newest first. */
  readonly names: readonly string[];
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
  const calls = new Map<string, ToolCallBlock>();
  const approvedPlans: string[] = [];
  const decisions = new Map<string, string>();
  const changes = new Map<string, string[]>();
  let latestEdit: { path: string; text: string } | undefined;
  const editsByFile = new Map<string, string>();
  const names = new Map<string, number>();
  for (const message of own) {
    if (isInstruction(message)) {
      const text = messageText(message).trim();
      if (text) instructions.set(normalizeFact(text), text);
    }
    // Error lines come from what commands and tools reported, not from source code that mentions errors; paths
    // mentioned inside a file's text (examples, fixtures) are not files of the work either.
    const reportsErrors = message.role === "tool" && errorsWorthKeeping(message, calls);
    const mentionsFiles = message.role !== "tool" || reportsErrors || searchOutput(message, calls);
    for (const fact of messageFacts(message)) {
      // A path the user or the agent wrote counts as written; one in a tool's output only when it names a file.
      const path = fact.kind === "file-path" && mentionsFiles && !files.has(fact.text);
      if (path && (message.role === "tool" ? namesFile(fact.text) : isPathLike(fact.text)))
        files.set(fact.text, new Map());
      if (fact.kind === "error-line" && reportsErrors && !errorLines.has(fact.key))
        errorLines.set(fact.key, fact.text);
    }
    for (const call of toolCallsOf(message)) {
      calls.set(call.id, call);
      const label = toolCallLabel(call);
      actions.set(label, (actions.get(label) ?? 0) + 1);
      const commandOnly = isCommand(call.input);
      for (const path of touchedPaths(call.input)) {
        if (commandOnly && !namesFile(path)) continue;
        const uses = files.get(path) ?? new Map<string, number>();
        uses.set(call.name, (uses.get(call.name) ?? 0) + 1);
        files.set(path, uses);
      }
      const plan = approvedPlan(call);
      if (plan !== undefined) approvedPlans.push(plan);
      const declared = declaredNames(call.input);
      const target = touchedPaths(call.input)[0];
      const added = newText(call.input);
      if (target !== undefined && added.trim() !== "") {
        latestEdit = { path: target, text: clipLines(added, MAX_EDIT_CHARS) };
        editsByFile.delete(target);
        editsByFile.set(target, latestEdit.text);
      }
      if (declared.length > 0 && target !== undefined) {
        const names = changes.get(target) ?? [];
        for (const name of declared) if (!names.includes(name)) names.push(name);
        changes.set(target, names);
      }
    }
    if (message.role === "assistant") {
      const text = messageText(message).trim();
      if (text) finalReplyByTurn.set(message.turn, clip(collapseWhitespace(text), limits.maxConclusionChars));
      for (const sentence of decisionSentences(text)) decisions.set(normalizeFact(sentence), sentence);
      for (const [token, kind] of distinctiveTokens(text)) {
        if (kind !== "identifier") continue;
        names.delete(token);
        names.set(token, names.size);
      }
    }
  }
  return {
    instructions: [...instructions.values()],
    files,
    actions,
    ...failuresOf(own),
    errorLines: [...errorLines.values()],
    plan: latestPlan(own),
    conclusions: [...finalReplyByTurn.values()].slice(-limits.conclusionTurns),
    approvedPlans,
    decisions: [...decisions.values()],
    changes,
    ...(latestEdit !== undefined && { latestEdit }),
    recentEdits: [...editsByFile]
      .reverse()
      .slice(1, RECENT_EDIT_FILES + 1)
      .map(([path, text]) => ({ path, text })),
    names: [...names.keys()].reverse(),
  };
}

/** The newest edit keeps this much of its text (and the newest edit of each recent file). */
const MAX_EDIT_CHARS = 1_500;
/** Files besides the newest edit's whose newest text a digest keeps. */
const RECENT_EDIT_FILES = 4;

/** `text` cut to whole lines within `limit` characters (at least its first line, clipped). */
function clipLines(text: string, limit: number): string {
  const lines = text.split("\n");
  let kept = 0;
  let chars = 0;
  while (kept < lines.length && chars + lines[kept]!.length + 1 <= limit) chars += lines[kept++]!.length + 1;
  if (kept === 0) return clip(lines[0]!, limit);
  return kept === lines.length ? text : `${lines.slice(0, kept).join("\n")}\n[…]`;
}

/** The text an edit or write call adds: its new strings, or a patch's added lines. */
function newText(input: JsonValue): string {
  if (typeof input === "string")
    return input
      .split("\n")
      .filter((line) => line.startsWith("+") && !line.startsWith("+++"))
      .map((line) => line.slice(1))
      .join("\n");
  if (input === null || typeof input !== "object" || Array.isArray(input)) return "";
  const texts: string[] = [];
  for (const [key, value] of Object.entries(input)) {
    if (NEW_TEXT_KEYS.has(key)) texts.push(...stringLeaves(value));
    if (key === "edits" && Array.isArray(value))
      for (const edit of value)
        if (edit !== null && typeof edit === "object" && !Array.isArray(edit))
          for (const [editKey, editValue] of Object.entries(edit))
            if (NEW_TEXT_KEYS.has(editKey)) texts.push(...stringLeaves(editValue));
  }
  return texts.join("\n");
}

/**
 * True for a path that names a file, as opposed to a folder, a URL route or a fragment: a directory part and a
 * file extension, no line break (an escaped `\n` in a string literal is not a path either).
 */
function namesFile(path: string): boolean {
  return /[/\\][^/\\]*\.[A-Za-z][A-Za-z0-9]{0,7}$/.test(path) && !path.startsWith("..") && isPathLike(path);
}

/** Not a fragment: no line break (an escaped `\n` is not a path) and not a list of extensions (`.ex/.exs`). */
function isPathLike(path: string): boolean {
  return !/\n|\\n/.test(path) && !/^\.[A-Za-z0-9]+\//.test(path);
}

/** A shell command's text: its paths are mentions unless they name files. */
function isCommand(input: JsonValue): boolean {
  return (
    typeof input === "object" &&
    input !== null &&
    !Array.isArray(input) &&
    ("command" in input || "cmd" in input)
  );
}

/** Outputs whose error lines are worth keeping: what a command or other tool reported, not a file's text. */
function errorsWorthKeeping(message: Message, calls: ReadonlyMap<string, ToolCallBlock>): boolean {
  return message.content.some((block) => {
    if (block.type !== "tool-result") return false;
    const call = calls.get(block.callId);
    const kind = call === undefined ? "other" : outputKind(call);
    return kind === "shell" || kind === "other" || isFailedResult(block);
  });
}

/** True for a search or listing output: the paths it shows are files of the project. */
function searchOutput(message: Message, calls: ReadonlyMap<string, ToolCallBlock>): boolean {
  return message.content.some((block) => {
    if (block.type !== "tool-result") return false;
    const call = calls.get(block.callId);
    return call !== undefined && outputKind(call) === "search";
  });
}

const PLAN_TOOLS = /^(?:exit_?plan_?mode)$/i;

/** The plan of a plan-mode exit (Claude Code's ExitPlanMode): the plan the user was asked to approve. */
function approvedPlan(call: ToolCallBlock): string | undefined {
  if (!PLAN_TOOLS.test(call.name)) return undefined;
  const plan =
    typeof call.input === "object" && call.input !== null && !Array.isArray(call.input)
      ? call.input["plan"]
      : undefined;
  return typeof plan === "string" && plan.trim() !== "" ? plan.trim() : undefined;
}

/** Sentences that state a decision or its reason. */
const DECISION =
  /\b(?:because|so that|instead of|rather than|decided|decide to|chose|choose|the (?:root )?cause|the (?:issue|problem|fix|bug) (?:is|was)|this means|we (?:should|need to|will)|I'll use|I will use|approach)\b/i;
const MAX_DECISION_CHARS = 300;

function decisionSentences(text: string): string[] {
  const found: string[] = [];
  for (const sentence of text.split(/(?<=[.!?])\s+|\n+/)) {
    const collapsed = collapseWhitespace(sentence);
    // A row of a markdown table (`| Approach | Effort |`) compares options; it decides nothing.
    if (collapsed.length < 20 || !DECISION.test(collapsed) || collapsed.startsWith("|")) continue;
    found.push(clip(collapsed, MAX_DECISION_CHARS));
  }
  return found;
}

/** Arguments that carry the new text an edit or write puts in a file. */
const NEW_TEXT_KEYS = new Set([
  "new_string",
  "new_str",
  "content",
  "file_text",
  "newText",
  "new_text",
  "replace",
]);
const DECLARED_NAME =
  /^\s*(?:export\s+|pub(?:\(\w+\))?\s+|public\s+|private\s+|protected\s+|static\s+|async\s+|abstract\s+|default\s+)*(?:function\*?|class|interface|type|enum|def|defp|defmacro|defmodule|fn|struct|trait|func|module)\s+([A-Za-z_$][\w$.?!]*)/;

/** The names an edit or write declares in the text it adds (functions, classes, types, modules). */
function declaredNames(input: JsonValue): string[] {
  const names: string[] = [];
  for (const line of newText(input).split("\n")) {
    const name = DECLARED_NAME.exec(line)?.[1];
    if (name !== undefined && !names.includes(name)) names.push(name);
  }
  return names;
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
