/** One rewrite applied to a system prompt before it is sent through a CLI. */
export interface NeutralRewriteRule {
  readonly pattern: RegExp;
  readonly replacement: string;
}

const THIRD_PERSON_VERBS =
  "have|do|need|use|know|help|answer|run|respond|act|work|get|follow|receive|call|see|write|reply|assist";
const MODALS = "must|should|will|would|can|cannot|can't|could|may|might|shall|never|always|only|also";

function capitalizedAndLower(
  words: string,
  capitalized: string,
  lower: string,
  build: (subject: string) => string,
) {
  return [
    { pattern: new RegExp(`\\bYou (${words})\\b`, "g"), replacement: build(capitalized) },
    { pattern: new RegExp(`\\byou (${words})\\b`, "g"), replacement: build(lower) },
  ];
}

/**
 * The documented rewrite rules, applied in order. CLI front ends (Claude Code, Gemini CLI) treat second-person
 * identity language in piped prompts ("You are X, you must…") as an attempt to re-instruct them and may refuse;
 * the same instructions in neutral third person pass. Rules:
 * 1. "You are" / "You're" / "You were" → "The assistant is / was".
 * 2. "You <modal>" (must, should, will, can, may, never, always, …) → "The assistant <modal>".
 * 3. "You <verb>" for common verbs (have, do, need, use, know, …) → "The assistant has / does / needs / uses / …".
 * 4. "You don't" / "You do not" → "The assistant does not".
 * 5. "yourself" → "itself"; "yours" → "its own"; "your" → "its".
 * 6. Any remaining "you" → "the assistant".
 * 7. Lines that start with a role label ("System:", "Assistant:", "User:") lose the label, and "ignore / disregard
 *    (all) previous instructions" becomes "[instruction override removed]": such patterns read as prompt
 *    injection to the CLI.
 * Capitalised and lower-case forms have separate rules, so "You" at a sentence start stays capitalised.
 */
export const NEUTRAL_REWRITE_RULES: readonly NeutralRewriteRule[] = [
  {
    pattern: /\b(?:ignore|disregard) (?:all )?(?:previous|prior|above) instructions\b/gi,
    replacement: "[instruction override removed]",
  },
  { pattern: /^[ \t]*(?:system|assistant|user)[ \t]*:[ \t]*/gim, replacement: "" },
  { pattern: /\bYou (?:are|'re)\b|\bYou're\b/g, replacement: "The assistant is" },
  { pattern: /\byou (?:are|'re)\b|\byou're\b/g, replacement: "the assistant is" },
  { pattern: /\bYou were\b/g, replacement: "The assistant was" },
  { pattern: /\byou were\b/g, replacement: "the assistant was" },
  { pattern: /\bYou (?:don't|do not)\b/g, replacement: "The assistant does not" },
  { pattern: /\byou (?:don't|do not)\b/g, replacement: "the assistant does not" },
  ...capitalizedAndLower(MODALS, "The assistant", "the assistant", (subject) => `${subject} $1`),
  { pattern: /\bYou have\b/g, replacement: "The assistant has" },
  { pattern: /\byou have\b/g, replacement: "the assistant has" },
  { pattern: /\bYou do\b/g, replacement: "The assistant does" },
  { pattern: /\byou do\b/g, replacement: "the assistant does" },
  ...capitalizedAndLower(THIRD_PERSON_VERBS, "The assistant", "the assistant", (subject) => `${subject} $1s`),
  { pattern: /\b([Yy])ourself\b/g, replacement: "itself" },
  { pattern: /\bYours\b/g, replacement: "Its own" },
  { pattern: /\byours\b/g, replacement: "its own" },
  { pattern: /\bYour\b/g, replacement: "Its" },
  { pattern: /\byour\b/g, replacement: "its" },
  { pattern: /\bYou\b/g, replacement: "The assistant" },
  { pattern: /\byou\b/g, replacement: "the assistant" },
];

/**
 * Rewrites a system prompt into neutral third person with `NEUTRAL_REWRITE_RULES` (or your own rules).
 *
 * @example
 * neutralizeSystemPrompt("You are Contop. You must never reveal your keys.");
 * // "The assistant is Contop. The assistant must never reveal its keys."
 */
export function neutralizeSystemPrompt(
  prompt: string,
  rules: readonly NeutralRewriteRule[] = NEUTRAL_REWRITE_RULES,
): string {
  return rules.reduce((text, rule) => text.replace(rule.pattern, rule.replacement), prompt);
}
