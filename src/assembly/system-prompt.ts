import { z } from "zod";
import { validate } from "../model/schemas.ts";
import type { TokenCounter } from "../tokens/token-counter.ts";

/** The standard sections, in the order they appear in the system prompt (the Coqui seed's order). */
export const STANDARD_SECTIONS = [
  "identity",
  "iteration-budget",
  "tool-rules",
  "core-memories",
  "key-context",
  "project-context",
  "notifications",
] as const;

/** A standard section's name. */
export type StandardSectionName = (typeof STANDARD_SECTIONS)[number];

const headings: Record<StandardSectionName, string> = {
  identity: "IDENTITY AND PURPOSE",
  "iteration-budget": "ITERATION BUDGET",
  "tool-rules": "TOOL USAGE RULES",
  "core-memories": "CORE MEMORIES",
  "key-context": "KEY CONTEXT REMINDER",
  "project-context": "PROJECT CONTEXT",
  notifications: "NOTIFICATIONS",
};

/** One named part of the system prompt. */
export interface PromptSection {
  /** A standard name, or your own (`user sections` go after the standard ones unless `order` says otherwise). */
  readonly name: string;
  readonly content: string;
  /** Heading written above the content; standard sections have one, `null` writes none. */
  readonly heading?: string | null;
  /**
   * Upper bound in tokens of the section's block, heading included: longer content is cut with a notice, and the
   * section is left out when not even its heading and the notice fit. 0 or absent: no limit.
   */
  readonly maxTokens?: number;
  /** Position among sections (lower first). Standard sections use 10, 20, … 70. */
  readonly order?: number;
}

const sectionSchema = z.object({
  name: z.string().min(1, "a section needs a name"),
  content: z.string(),
  heading: z.string().nullable().optional(),
  maxTokens: z.number().int().nonnegative().optional(),
  order: z.number().optional(),
});

/** A section as it ended up in the prompt. */
export interface RenderedSection {
  readonly name: string;
  readonly tokens: number;
  readonly truncated: boolean;
}

/** The assembled system prompt and the tokens each section costs. */
export interface AssembledSystemPrompt {
  readonly text: string;
  readonly sections: readonly RenderedSection[];
  readonly tokens: number;
}

function orderOf(section: PromptSection): number {
  if (section.order !== undefined) return section.order;
  const standard = STANDARD_SECTIONS.indexOf(section.name as StandardSectionName);
  return standard >= 0 ? (standard + 1) * 10 : 1_000;
}

/**
 * A section's block (`prefix`, its heading, then the content) within `maxTokens` (0: no budget): the content cut
 * and a notice added when it does not fit, nothing when not even the heading and the notice fit.
 */
function fitToBudget(
  prefix: string,
  content: string,
  maxTokens: number,
  counter: TokenCounter,
): { text: string; truncated: boolean } {
  const whole = prefix + content;
  if (maxTokens <= 0 || counter.countText(whole) <= maxTokens) return { text: whole, truncated: false };
  const notice = "\n[… section shortened to fit its token budget …]";
  if (counter.countText(prefix + notice) > maxTokens) return { text: "", truncated: true };
  let low = 0;
  let high = content.length;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (counter.countText(prefix + content.slice(0, middle) + notice) <= maxTokens) low = middle;
    else high = middle - 1;
  }
  return { text: prefix + content.slice(0, low) + notice, truncated: true };
}

/**
 * Builds the system prompt for one turn from ordered, named sections: identity and purpose, iteration budget,
 * tool usage rules, core memories, key context reminder, project context, notifications, then your own. Empty
 * sections are left out; each is held to its token budget.
 *
 * Keep sections stable from turn to turn where you can: the system prompt is the start of every request, so a
 * change there makes the provider re-read the whole cached conversation.
 *
 * @example
 * const system = assembleSystemPrompt([
 *   { name: "identity", content: "You are a careful coding agent." },
 *   { name: "core-memories", content: memories, maxTokens: 800 },
 * ], counter);
 */
export function assembleSystemPrompt(
  sections: readonly PromptSection[],
  counter: TokenCounter,
): AssembledSystemPrompt {
  const valid = sections.map((section, index) => validate(sectionSchema, section, `prompt section ${index}`));
  const ordered = valid
    .map((section, index) => ({ section: section, index }))
    .filter(({ section }) => section.content.trim() !== "")
    .sort((a, b) => orderOf(a.section) - orderOf(b.section) || a.index - b.index);
  const parts: string[] = [];
  const rendered: RenderedSection[] = [];
  for (const { section } of ordered) {
    const heading =
      section.heading === null
        ? undefined
        : (section.heading ?? headings[section.name as StandardSectionName]);
    const prefix = heading ? `# ${heading}\n` : "";
    const { text: block, truncated } = fitToBudget(
      prefix,
      section.content.trim(),
      section.maxTokens ?? 0,
      counter,
    );
    if (block !== "") parts.push(block);
    rendered.push({ name: section.name, tokens: block === "" ? 0 : counter.countText(block), truncated });
  }
  const text = parts.join("\n\n");
  return { text, sections: rendered, tokens: text === "" ? 0 : counter.countText(text) };
}

/** The iteration-budget section for an agent loop capped at `maxSteps` steps. */
export function iterationBudgetSection(maxSteps: number): PromptSection {
  return {
    name: "iteration-budget",
    content:
      `You can take at most ${maxSteps} tool-calling steps for one request. Plan accordingly; when the ` +
      "budget is nearly spent, stop calling tools and answer with what you have and what remains.",
  };
}
