import type { JsonValue, Message } from "../model/message.ts";
import { stringLeaves } from "./facts.ts";
import { anchorLine, distinctiveTokens, type GroundingUnit, type TokenKind } from "./grounding-units.ts";

/**
 * What kind of thing a reply copied: a line an edit replaces (`anchor`), any other whole line it wrote that its
 * context held (`line`: a line carried into new text, a repeated command, a quoted output line), or a path,
 * identifier, literal or hyphenated name it typed.
 */
export type SpanKind = "anchor" | "line" | TokenKind;

/** One span of a reply that may have been copied from the agent's context. */
export interface ReplySpan {
  readonly kind: SpanKind;
  /** The span as the reply wrote it (an anchor line without its indentation). */
  readonly text: string;
  readonly unit: GroundingUnit;
}

/** Argument names under which edit tools quote the text they replace (Claude Code, Gemini CLI, SWE-agent…). */
const REPLACED_TEXT_KEYS = new Set([
  "old_string",
  "old_str",
  "oldString",
  "old_text",
  "oldText",
  "search",
  "find",
]);

/** The texts an edit replaces, wherever a tool call quotes them (nested edit lists included). */
function replacedTexts(input: JsonValue): string[] {
  if (input === null || typeof input !== "object") return [];
  if (Array.isArray(input)) return input.flatMap(replacedTexts);
  const found: string[] = [];
  for (const [key, value] of Object.entries(input)) {
    if (typeof value === "string" && REPLACED_TEXT_KEYS.has(key)) found.push(value);
    else if (typeof value === "object") found.push(...replacedTexts(value));
  }
  return found;
}

/**
 * The lines a patch expects to find: context (` `) and removed (`-`) lines of its hunks, in the unified diff
 * and Codex `apply_patch` formats. Added lines are the agent's own.
 */
function patchAnchorLines(text: string): string[] {
  if (!/^(?:\*\*\* (?:Begin Patch|Update File)|@@|--- )/m.test(text)) return [];
  const lines: string[] = [];
  let inHunk = false;
  for (const line of text.split("\n")) {
    if (line.startsWith("@@")) inHunk = true;
    else if (line.startsWith("*** ") || line.startsWith("--- ") || line.startsWith("+++ ")) inHunk = false;
    else if (inHunk && (line.startsWith(" ") || line.startsWith("-"))) lines.push(line.slice(1));
  }
  return lines;
}

/**
 * The spans of a recorded reply that an agent could only have typed by copying them from its context (DESIGN.md,
 * "What the agent needs next"): each line an edit replaces or a patch expects (edit anchors), every other whole
 * line of its text and tool-call arguments (copied lines), and the paths, identifiers, literals and hyphenated
 * names in them. Reasoning is not a source. Whether a span was
 * really copied — it was in the history — is for the caller to check; spans are deduplicated by unit.
 *
 * @example
 * replySpans([assistantEditing]).filter((span) => span.kind === "anchor")
 */
export function replySpans(reply: readonly Message[]): ReplySpan[] {
  const spans = new Map<GroundingUnit, ReplySpan>();
  const addAnchor = (line: string) => {
    const text = anchorLine(line);
    if (text === undefined) return;
    const unit: GroundingUnit = `line:${text}`;
    if (!spans.has(unit)) spans.set(unit, { kind: "anchor", text, unit });
  };
  const addLines = (text: string) => {
    for (const line of text.split("\n")) {
      // A patch's added lines (`+…`) are compared without their marker, as the file will hold them.
      const body = anchorLine(/^[+-](?![+-])/.test(line) ? line.slice(1) : line);
      if (body === undefined) continue;
      const unit: GroundingUnit = `line:${body}`;
      if (!spans.has(unit)) spans.set(unit, { kind: "line", text: body, unit });
    }
  };
  const addTokens = (text: string) => {
    for (const [token, kind] of distinctiveTokens(text)) {
      const unit: GroundingUnit = `token:${token}`;
      if (!spans.has(unit)) spans.set(unit, { kind, text: token, unit });
    }
  };
  for (const message of reply) {
    if (message.role !== "assistant") continue;
    for (const block of message.content) {
      if (block.type === "text") {
        addLines(block.text);
        addTokens(block.text);
      }
      if (block.type !== "tool-call") continue;
      for (const replaced of replacedTexts(block.input))
        for (const line of replaced.split("\n")) addAnchor(line);
      const leaves = stringLeaves(block.input);
      for (const leaf of leaves) for (const line of patchAnchorLines(leaf)) addAnchor(line);
      for (const leaf of leaves) addLines(leaf);
      for (const leaf of leaves) addTokens(leaf);
    }
  }
  return [...spans.values()];
}
