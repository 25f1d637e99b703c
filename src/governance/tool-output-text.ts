import { collapseWhitespace, filePathsIn } from "../metrics/fact-patterns.ts";
import { toolResultText } from "../model/blocks.ts";
import type { Message, ToolResultBlock } from "../model/message.ts";

/** The tool-result blocks of a tool message (usually exactly one). */
export function resultsOf(message: Message): ToolResultBlock[] {
  return message.content.filter((block): block is ToolResultBlock => block.type === "tool-result");
}

/** The text the model sees for a tool message: each result's content, JSON serialised first. */
export function toolMessageText(message: Message): string {
  return resultsOf(message)
    .map((result) => toolResultText(result.content))
    .join("\n");
}

/** Characters of file paths a preview lists at most. */
const MAX_PATH_LIST_CHARS = 1_500;

const shellTools =
  /^(bash|shell|sh|exec_command|run_shell_command|execute_cli|terminal|run_command|local_shell)$/i;
const signalLine =
  /error|exception|traceback|failed|fatal|panic|exit code|exit status|exited with|returncode|\bFAIL\b|✗|✘|×/i;
/**
 * A line that declares something in source code (a function, class, method, type, constant, module): the
 * outline of a file, which names what the agent may call or edit next.
 */
const declarationLine =
  /^\W*\d*\W*\s*(?:export\s+|pub(?:\(\w+\))?\s+|public\s+|private\s+|protected\s+|static\s+|async\s+|abstract\s+|default\s+)*(?:function|class|interface|type|enum|const|let|def|defp|defmodule|fn|struct|impl|trait|mod|module|func|package|record|object)\b/;

/** True when the result looks like shell output (by tool name, or an exit-code line). */
export function isShellOutput(result: ToolResultBlock, text: string): boolean {
  return shellTools.test(result.toolName) || /exit code:?\s*-?\d+/i.test(text.slice(-400));
}

/** Signal lines keep this many characters (an error line's fact is its first 120). */
const SIGNAL_LINE_CHARS = 160;

/**
 * What a preview keeps of the hidden middle of an output, by what the output is: the lines agents act on next.
 * - `errors`: every distinct error, failure and exit-code line (a command's or a test run's output);
 * - `outline`: those, and the lines that declare something (a file's functions, classes, types: the names the
 *   agent calls or edits next, verbatim);
 * - `matches`: every line, in order (a search result is nothing but the matches the agent asked for).
 */
export type PreviewFocus = "errors" | "outline" | "matches";

/**
 * A short preview of a long output: its first and last `lines` lines; from the lines in between, the lines its
 * `focus` keeps (whitespace collapsed, clipped; see `PreviewFocus`) within a budget of 15% of the output — 25%
 * for shell output — and at least 2,000 characters; then the file paths the hidden part mentions, so what the
 * agent touched and what failed stay visible. Head and tail lines are clipped to 240 characters.
 */
export function outputPreview(
  text: string,
  lines: number,
  shell: boolean,
  focus: PreviewFocus = "errors",
): string {
  const all = text.split("\n");
  const clip = (line: string) => (line.length > 240 ? `${line.slice(0, 240)}…` : line);
  if (all.length <= lines * 2 + 1) return all.map(clip).join("\n");
  const head = all.slice(0, lines).map(clip);
  const tail = all.slice(-lines).map(clip);
  const hidden = all.slice(lines, -lines);
  const signals = signalLines(hidden, Math.max(2_000, text.length * (shell ? 0.25 : 0.15)), focus);
  const shown = [...head, ...signals, ...tail].join("\n");
  const paths: string[] = [];
  let pathChars = 0;
  for (const path of filePathsIn(hidden.join("\n"))) {
    if (shown.includes(path)) continue;
    if (pathChars + path.length > MAX_PATH_LIST_CHARS) break;
    paths.push(path);
    pathChars += path.length + 1;
  }
  const skipped = hidden.length - signals.length;
  return [
    ...head,
    `[… ${skipped} lines not shown …]`,
    ...signals,
    ...tail,
    ...(paths.length > 0 ? [`[paths mentioned in the hidden part: ${paths.join(" ")}]`] : []),
  ].join("\n");
}

/** The distinct lines of `lines` that `focus` keeps, collapsed and clipped, in order, within `budget` characters. */
function signalLines(lines: readonly string[], budget: number, focus: PreviewFocus): string[] {
  const kept = new Set<string>();
  let chars = 0;
  for (const line of lines) {
    const wanted =
      focus === "matches" || signalLine.test(line) || (focus === "outline" && declarationLine.test(line));
    if (!wanted || line.trim() === "") continue;
    const collapsed = collapseWhitespace(line);
    const signal =
      collapsed.length > SIGNAL_LINE_CHARS ? `${collapsed.slice(0, SIGNAL_LINE_CHARS)}…` : collapsed;
    if (kept.has(signal)) continue;
    if (chars + signal.length > budget) break;
    kept.add(signal);
    chars += signal.length + 1;
  }
  return [...kept];
}
