import { filePathsIn } from "../metrics/fact-patterns.ts";
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
  /error|exception|traceback|failed|fatal|panic|exit code|exit status|exited with|returncode/i;

/** True when the result looks like shell output (by tool name, or an exit-code line). */
export function isShellOutput(result: ToolResultBlock, text: string): boolean {
  return shellTools.test(result.toolName) || /exit code:?\s*-?\d+/i.test(text.slice(-400));
}

/**
 * A short preview of a long output: its first and last `lines` lines; from the lines in between, the error and
 * exit-code lines (for every output, and more of them for shell output); then the file paths the hidden part
 * mentions, so what the agent touched stays visible. Each line is clipped to 240 characters.
 */
export function outputPreview(text: string, lines: number, shell: boolean): string {
  const all = text.split("\n");
  const clip = (line: string) => (line.length > 240 ? `${line.slice(0, 240)}…` : line);
  if (all.length <= lines * 2 + 1) return all.map(clip).join("\n");
  const head = all.slice(0, lines).map(clip);
  const tail = all.slice(-lines).map(clip);
  const hidden = all.slice(lines, -lines);
  const signals = hidden
    .filter((line) => signalLine.test(line))
    .slice(0, shell ? lines * 2 : lines)
    .map(clip);
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
