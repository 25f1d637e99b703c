import type { JsonValue, Message, ToolCallBlock } from "../model/message.ts";

/**
 * What a piece of context is, for the chance the agent uses it again (see `reuse-rates.ts`):
 * - `read`: a file's text an agent read (Read, read_file, view, `cat`/`sed -n`/`head` …);
 * - `search`: a listing or search result (Grep, Glob, ls, `rg`, `find` …);
 * - `edit`: what an edit or write call reported (often a snippet of the changed file);
 * - `shell`: any other command's output (tests, builds, git …);
 * - `other`: every other tool's output (web fetches, domain APIs, subagents …);
 * - `written`: the text an agent's own edit or write call carried (its arguments).
 */
export type ContextKind = "read" | "search" | "edit" | "shell" | "other" | "written";

/** Every kind of context, in the order tables list them. */
export const CONTEXT_KINDS = [
  "read",
  "search",
  "edit",
  "shell",
  "other",
  "written",
] as const satisfies readonly ContextKind[];

const READ_TOOLS = /^(?:read|read_?file|view|open|cat|view_file|read_many_files)$/i;
const SEARCH_TOOLS = /^(?:grep|glob|ls|find|find_?file|search\w*|list_?dir\w*|list_files|codebase_search)$/i;
const EDIT_TOOLS =
  /^(?:edit|multi_?edit|write|write_?file|replace|apply_?patch|str_replace\w*|edit_?file|create|insert|notebook_?edit)$/i;
const SHELL_TOOLS = /bash|shell|exec|command|terminal|run|stdin/i;
const READ_COMMAND = /^\s*(?:cat|sed\s+-n|head|tail|nl|less|bat)\b/;
const SEARCH_COMMAND = /^\s*(?:grep|rg|ag|find|fd|ls|tree|git\s+(?:grep|ls-files))\b/;

function commandOf(input: JsonValue): string {
  if (typeof input === "string") return input;
  if (input === null || typeof input !== "object" || Array.isArray(input)) return "";
  const command = input["command"] ?? input["cmd"];
  if (Array.isArray(command)) return command.filter((part) => typeof part === "string").join(" ");
  return typeof command === "string" ? command : "";
}

/**
 * The kind of a tool call's output, from the tool's name and, for shell tools, the command it ran.
 *
 * @example
 * outputKind({ name: "Bash", input: { command: "sed -n '1,80p' src/a.ts" } }) // "read"
 */
export function outputKind(call: Pick<ToolCallBlock, "name" | "input">): Exclude<ContextKind, "written"> {
  if (READ_TOOLS.test(call.name)) return "read";
  if (SEARCH_TOOLS.test(call.name)) return "search";
  if (EDIT_TOOLS.test(call.name)) return "edit";
  if (SHELL_TOOLS.test(call.name)) {
    const command = commandOf(call.input);
    if (READ_COMMAND.test(command)) return "read";
    if (SEARCH_COMMAND.test(command)) return "search";
    return "shell";
  }
  return "other";
}

/**
 * The kind of context a message is: a tool message by the call it answers (looked up in `calls`), an assistant
 * message whose calls edit or write (`written`), or undefined for everything else (instructions, replies).
 *
 * @example
 * contextKind(toolMessage, callsById) // "search"
 */
export function contextKind(
  message: Message,
  calls: ReadonlyMap<string, Pick<ToolCallBlock, "name" | "input">>,
): ContextKind | undefined {
  if (message.role === "tool") {
    for (const block of message.content) {
      if (block.type !== "tool-result") continue;
      const call = calls.get(block.callId);
      return call === undefined ? "other" : outputKind(call);
    }
    return undefined;
  }
  if (
    message.role === "assistant" &&
    message.content.some((block) => block.type === "tool-call" && EDIT_TOOLS.test(block.name))
  )
    return "written";
  return undefined;
}
