import { isInstruction, toolResultText } from "../model/blocks.ts";
import type { JsonValue, Message } from "../model/message.ts";
import { errorLinesIn, filePathsIn, instructionSentences, normalizeFact } from "./fact-patterns.ts";
import { toolCallLabel } from "./tool-call-label.ts";

/** The kinds of retention facts (DESIGN.md, "Retention"). */
export type FactKind = "file-path" | "error-line" | "tool-call" | "instruction";

/** One retention fact of a message. */
export interface Fact {
  readonly kind: FactKind;
  /** Display form, as a summary should write it (original case, whitespace collapsed). */
  readonly text: string;
  /** Scored form: `normalizeFact(text)`. Present in a view when it is a substring of the view's scoring text. */
  readonly key: string;
}

/**
 * The retention facts of one message, deduplicated by key, in a fixed order: instructions, tool calls, file
 * paths, error lines. Sources: text blocks (all roles), the string arguments of tool calls and the text of tool
 * results. Reasoning is not a source (providers strip or redact it; stripping it is not a loss of context).
 *
 * @example
 * messageFacts(assistantCallingRead).map((fact) => fact.key) // ["read(src/a.ts)", "src/a.ts"]
 */
export function messageFacts(message: Pick<Message, "role" | "kind" | "content">): Fact[] {
  const instructions: string[] = [];
  const calls: string[] = [];
  const texts: string[] = [];
  for (const block of message.content) {
    if (block.type === "text") {
      texts.push(block.text);
      if (isInstruction(message)) instructions.push(...instructionSentences(block.text));
    } else if (block.type === "tool-call") {
      calls.push(toolCallLabel(block));
      texts.push(...stringLeaves(block.input));
    } else if (block.type === "tool-result") {
      texts.push(toolResultText(block.content));
    }
  }
  const facts = new Map<string, Fact>();
  const add = (kind: FactKind, text: string) => {
    const key = normalizeFact(text);
    if (key !== "" && !facts.has(key)) facts.set(key, { kind, text, key });
  };
  for (const text of instructions) add("instruction", text);
  for (const text of calls) add("tool-call", text);
  for (const text of texts) for (const path of filePathsIn(text)) add("file-path", path);
  for (const text of texts) for (const line of errorLinesIn(text)) add("error-line", line);
  return [...facts.values()];
}

/**
 * What of a message can hold a fact once it is in a view, normalised like fact keys and on one line: text and
 * reasoning, tool calls as `name(primary argument)` plus their string arguments, tool results as sent. Facts
 * never contain a line break, so joining messages with `\n` cannot create a match across two messages.
 *
 * @example
 * messageScoringText(summaryMessage).includes("read(src/a.ts)")
 */
export function messageScoringText(message: Pick<Message, "content">): string {
  const parts: string[] = [];
  for (const block of message.content) {
    if (block.type === "text" || block.type === "reasoning") parts.push(block.text);
    else if (block.type === "tool-call") parts.push(toolCallLabel(block), ...stringLeaves(block.input));
    else if (block.type === "tool-result") parts.push(toolResultText(block.content));
  }
  return normalizeFact(parts.join("\n"));
}

/** Every string inside a JSON value, depth first. */
export function stringLeaves(value: JsonValue): string[] {
  if (typeof value === "string") return [value];
  if (value === null || typeof value !== "object") return [];
  const values = Array.isArray(value) ? value : Object.values(value);
  return values.flatMap(stringLeaves);
}
