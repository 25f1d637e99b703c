import type { JsonValue, ToolCallBlock } from "../model/message.ts";
import { collapseWhitespace } from "./fact-patterns.ts";

/**
 * Argument keys that name what a tool call acts on, most telling first: shell commands, files, directories,
 * search patterns and queries, URLs, then descriptions. Covers Claude Code, Codex, Gemini CLI, SWE-agent and
 * OpenAI-style function tools; anything else falls back to the first string argument.
 */
export const PRIMARY_ARGUMENT_KEYS: readonly string[] = [
  "command",
  "cmd",
  "file_path",
  "filePath",
  "absolute_path",
  "path",
  "dir_path",
  "file_name",
  "filename",
  "pattern",
  "query",
  "url",
  "description",
  "prompt",
];

/**
 * Primary arguments longer than this many characters (after whitespace is collapsed) keep their start and their
 * end around an ellipsis: the start of a command and the file name at the end of a long path both survive.
 */
export const PRIMARY_ARGUMENT_LENGTH = 100;

/**
 * What a tool call acts on: the value of the first of `PRIMARY_ARGUMENT_KEYS` present (strings, numbers and
 * string arrays such as `["bash", "-lc", "ls"]` are accepted), else the first string value of the input, else
 * nothing; a string input (free-form tools such as `apply_patch`) is its own primary argument. Whitespace is
 * collapsed and a longer value is cut to 100 characters: its first 50, `…`, its last 49.
 *
 * @example
 * primaryArgument({ file_path: "src/a.ts", limit: 20 }) // "src/a.ts"
 * primaryArgument({ reservation_id: "ZFA04Y" })          // "ZFA04Y"
 */
export function primaryArgument(input: JsonValue): string | undefined {
  const value = pickPrimary(input);
  if (value === undefined) return undefined;
  const text = collapseWhitespace(value);
  if (text === "") return undefined;
  if (text.length <= PRIMARY_ARGUMENT_LENGTH) return text;
  const head = Math.ceil((PRIMARY_ARGUMENT_LENGTH - 1) / 2);
  const tail = PRIMARY_ARGUMENT_LENGTH - 1 - head;
  return `${text.slice(0, head)}…${text.slice(-tail)}`;
}

function pickPrimary(input: JsonValue): string | undefined {
  if (typeof input === "string") return input;
  if (input === null || typeof input !== "object" || Array.isArray(input)) return undefined;
  for (const key of PRIMARY_ARGUMENT_KEYS) {
    const value = scalarText(input[key]);
    if (value !== undefined) return value;
  }
  for (const value of Object.values(input)) if (typeof value === "string" && value.trim()) return value;
  return undefined;
}

function scalarText(value: JsonValue | undefined): string | undefined {
  if (typeof value === "string") return value.trim() ? value : undefined;
  if (typeof value === "number") return String(value);
  if (Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === "string")) {
    return value.join(" ");
  }
  return undefined;
}

/**
 * A tool call as a retention fact: `name(primary argument)`, or `name()` when it has none.
 *
 * @example
 * toolCallLabel({ name: "Bash", input: { command: "npm  test" } }) // "Bash(npm test)"
 */
export function toolCallLabel(call: Pick<ToolCallBlock, "name" | "input">): string {
  return `${call.name}(${primaryArgument(call.input) ?? ""})`;
}
