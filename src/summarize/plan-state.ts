import type { JsonValue, Message, ToolCallBlock } from "../model/message.ts";

/** Where a plan step stands. */
export type PlanStatus = "done" | "in progress" | "pending";

/** One step of the agent's plan or todo list. */
export interface PlanItem {
  readonly text: string;
  readonly status: PlanStatus;
}

const LIST_KEYS = ["todos", "plan", "tasks", "steps"] as const;
const TEXT_KEYS = ["content", "step", "description", "title", "task", "text"] as const;
/** A checklist item, matched on a line whose end is already trimmed (a lazy `(.+?)\s*$` backtracks quadratically). */
const CHECKLIST_LINE = /^\s*[-*]\s+\[([ xX~>-])\]\s+(.+)$/;

function statusOf(value: JsonValue | undefined): PlanStatus {
  const status = typeof value === "string" ? value.toLowerCase() : "";
  if (["completed", "complete", "done", "finished"].includes(status)) return "done";
  if (["in_progress", "in-progress", "in progress", "active", "doing"].includes(status)) return "in progress";
  return "pending";
}

/**
 * The plan a tool call writes: a list under `todos`/`plan`/`tasks`/`steps` (Claude Code `TodoWrite`, Codex
 * `update_plan`, Gemini CLI `write_todos`) whose entries have a text and a status; undefined for other calls.
 *
 * @example
 * planFromToolCall({ input: { plan: [{ step: "Write tests", status: "completed" }] } })
 * // [{ text: "Write tests", status: "done" }]
 */
export function planFromToolCall(call: Pick<ToolCallBlock, "input">): PlanItem[] | undefined {
  const input = call.input;
  if (input === null || typeof input !== "object" || Array.isArray(input)) return undefined;
  for (const listKey of LIST_KEYS) {
    const list = input[listKey];
    if (!Array.isArray(list)) continue;
    const items: PlanItem[] = [];
    for (const entry of list) {
      if (entry === null || typeof entry !== "object" || Array.isArray(entry)) continue;
      const text = TEXT_KEYS.map((key) => entry[key]).find((value) => typeof value === "string");
      if (typeof text !== "string") continue;
      items.push({ text: text.trim(), status: statusOf(entry["status"]) });
    }
    if (items.length > 0) return items;
  }
  return undefined;
}

/**
 * A Markdown checklist (`- [x] done`, `- [ ] todo`) of at least two lines in `text`, or undefined.
 *
 * @example
 * planFromText("- [x] parse\n- [ ] render")
 * // [{ text: "parse", status: "done" }, { text: "render", status: "pending" }]
 */
export function planFromText(text: string): PlanItem[] | undefined {
  const items: PlanItem[] = [];
  for (const line of text.split("\n")) {
    const match = CHECKLIST_LINE.exec(line.trimEnd());
    if (!match) continue;
    const mark = match[1]!;
    const status = mark === "x" || mark === "X" ? "done" : mark === " " ? "pending" : "in progress";
    items.push({ text: match[2]!, status });
  }
  return items.length >= 2 ? items : undefined;
}

/**
 * The newest plan in `messages`: the last plan-writing tool call or assistant checklist, whichever is later.
 *
 * @example
 * latestPlan(history)?.filter((item) => item.status !== "done")
 */
export function latestPlan(messages: readonly Message[]): PlanItem[] | undefined {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (message.role !== "assistant") continue;
    for (let position = message.content.length - 1; position >= 0; position--) {
      const block = message.content[position]!;
      const plan =
        block.type === "tool-call"
          ? planFromToolCall(block)
          : block.type === "text"
            ? planFromText(block.text)
            : undefined;
      if (plan) return plan;
    }
  }
  return undefined;
}
