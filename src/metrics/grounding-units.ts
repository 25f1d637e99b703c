import { toolResultText } from "../model/blocks.ts";
import type { ContentBlock, Message } from "../model/message.ts";
import { filePathsIn } from "./fact-patterns.ts";
import { stringLeaves } from "./facts.ts";

/**
 * The units a grounding span is matched by: a whole source line (`line:`…, for edit anchors) or a token
 * (`token:`…, for paths, identifiers and literals). A span is "in" a text when its unit is one of the text's
 * units: whole lines and whole tokens, never fragments, so `foo` is not found inside `foobar`.
 */
export type GroundingUnit = `line:${string}` | `token:${string}`;

/**
 * Line prefixes that are not part of the text they show: `cat -n` / Read gutters (`   12→`, `  12\t`),
 * and `grep -n` / ripgrep positions (`src/a.ts:12:`, `12:`, `12-`).
 */
const LINE_GUTTER = /^\s*\d+(?:→|\t)|^[^\s:]+:\d+[:-]|^\d+[:-](?=\S)/;

/** A line is worth matching when it has this many non-space characters, of which this many letters or digits. */
const MIN_LINE_CHARS = 8;
// The two counts as tests that allocate nothing (lines are the bulk of what governance and the metrics read).
// Anchored, with each repetition followed by its complement, so they never backtrack.
const ENOUGH_CHARS = new RegExp(`^\\s*(?:\\S\\s*){${MIN_LINE_CHARS}}`);
const ENOUGH_ALNUM = /^[^A-Za-z0-9]*(?:[A-Za-z0-9][^A-Za-z0-9]*){3}/;

/**
 * A source line as an anchor is compared: gutter removed, ends trimmed. Undefined for lines too short or too
 * plain to tell anything (`}`, `});`, blank).
 *
 * @example
 * anchorLine("    12→  return total;") // "return total;"
 * anchorLine("  });") // undefined
 */
export function anchorLine(line: string): string | undefined {
  if (line.length < MIN_LINE_CHARS) return undefined;
  const text = line.replace(LINE_GUTTER, "").trim();
  if (!ENOUGH_CHARS.test(text) || !ENOUGH_ALNUM.test(text)) return undefined;
  return text;
}

/** Maximal runs of characters identifiers, paths and literals are made of. */
const TOKEN_RUN = /[\w$.~@+/-]+/g;
const URL = /\bhttps?:\/\/[^\s"'`<>()[\]{}]+/g;
const IDENTIFIER = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$/;
const HEX = /^(?=.*\d)(?=.*[a-f])[0-9a-f]{7,64}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LONG_NUMBER = /^\d{5,}$/;
const MIN_IDENTIFIER = 4;
const PLAIN_WORD = /^[A-Z]?[a-z]+$/;

/**
 * True for an identifier distinctive enough that seeing it in a reply means it was taken from somewhere:
 * camelCase or PascalCase with two humps, snake_case, letters mixed with digits, or a dotted access
 * (`config.maxTokens`). Plain words (`return`, `Summary`) are not.
 *
 * @example
 * isDistinctiveIdentifier("parseConfig") // true
 * isDistinctiveIdentifier("function") // false
 */
export function isDistinctiveIdentifier(token: string): boolean {
  if (token.length < MIN_IDENTIFIER || !IDENTIFIER.test(token)) return false;
  if (/[a-z][A-Z]/.test(token) || /[A-Z]{2}[a-z]/.test(token)) return true;
  if (/[A-Za-z0-9]_[A-Za-z0-9]/.test(token)) return true;
  if (/[A-Za-z]/.test(token) && /\d/.test(token)) return true;
  const parts = token.split(".");
  return parts.length >= 2 && parts.every((part) => part.length >= 2);
}

/** The kinds of token a reply can copy. */
export type TokenKind = "path" | "identifier" | "literal" | "name";

/**
 * Hyphenated names: command-line flags (`--no-verify`), package, branch, CSS and command names
 * (`ts-node`, `feature/x-y`, `grid-template-columns`). Distinctive as a flag, with two hyphens or more, or with a
 * digit; one-hyphen words (`well-known`) are prose.
 */
const KEBAB = /^[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+$/;
const MIN_NAME = 6;

function isDistinctiveName(token: string, flag: boolean): boolean {
  if (token.length < MIN_NAME || !KEBAB.test(token)) return false;
  return flag || token.split("-").length >= 3 || /\d/.test(token);
}

/**
 * The distinctive tokens of a text, each with its kind: file paths (as `filePathsIn` finds them), URLs, hashes,
 * UUIDs and long numbers (literals), distinctive identifiers, and hyphenated names and flags.
 *
 * @example
 * distinctiveTokens("fix parseConfig in src/config.ts") // [["src/config.ts", "path"], ["parseConfig", "identifier"]]
 */
export function distinctiveTokens(text: string): [string, TokenKind][] {
  const found = new Map<string, TokenKind>();
  for (const path of filePathsIn(text)) found.set(path, "path");
  for (const match of text.matchAll(URL)) found.set(match[0].replace(/[.,;:!?]+$/, ""), "literal");
  for (const match of text.matchAll(TOKEN_RUN)) {
    // Shorter than any distinctive token, or a plain word: neither a literal nor a distinctive identifier.
    if (match[0].length < MIN_IDENTIFIER || PLAIN_WORD.test(match[0])) continue;
    const token = match[0].replace(/^[.-]+|[.,:;!?-]+$/g, "");
    if (found.has(token)) continue;
    if (HEX.test(token) || UUID.test(token) || LONG_NUMBER.test(token)) found.set(token, "literal");
    else if (isDistinctiveName(token, match[0].startsWith("--"))) found.set(token, "name");
    else if (isDistinctiveIdentifier(token)) {
      found.set(token, "identifier");
      // `config.maxTokens` also shows `maxTokens`.
      if (token.includes("."))
        for (const part of token.split("."))
          if (!found.has(part) && isDistinctiveIdentifier(part)) found.set(part, "identifier");
    }
  }
  return [...found];
}

/** The texts of a message an agent can read: text, tool-call arguments, tool results (not reasoning). */
export function readableTexts(message: Pick<Message, "content">): string[] {
  return message.content.flatMap(blockTexts);
}

function blockTexts(block: ContentBlock): string[] {
  if (block.type === "text") return [block.text];
  if (block.type === "tool-call") return [block.name, ...stringLeaves(block.input)];
  if (block.type === "tool-result") return [toolResultText(block.content)];
  return [];
}

/**
 * Path tokens also stand for their shorter tails (`/repo/src/a.ts` shows `src/a.ts` and `a.ts`), so a relative
 * path copied from an absolute one is found.
 */
function pathTails(path: string): string[] {
  const tails: string[] = [];
  for (let slash = path.indexOf("/"); slash >= 0; slash = path.indexOf("/", slash + 1)) {
    const tail = path.slice(slash + 1);
    if (tail.length >= MIN_IDENTIFIER) tails.push(tail);
  }
  return tails;
}

const unitsByMessage = new WeakMap<Message, ReadonlySet<GroundingUnit>>();

/**
 * Every unit of a message — its anchor lines and distinctive tokens (with path tails) — computed once per
 * message object.
 *
 * @example
 * messageUnits(readResult).has("line:return total;")
 */
export function messageUnits(message: Message): ReadonlySet<GroundingUnit> {
  let units = unitsByMessage.get(message);
  if (units !== undefined) return units;
  units = unitsOf(readableTexts(message));
  unitsByMessage.set(message, units);
  return units;
}

const unitsByBlock = new WeakMap<ContentBlock, ReadonlySet<GroundingUnit>>();

/**
 * The units of one content block (as `messageUnits` finds them in a message), computed once per block object:
 * a message governance rewrote keeps the blocks it did not change, and those are still recorded text.
 *
 * @example
 * blockUnits(readResult.content[0]!).has("line:return total;")
 */
export function blockUnits(block: ContentBlock): ReadonlySet<GroundingUnit> {
  let units = unitsByBlock.get(block);
  if (units === undefined) {
    units = unitsOf(blockTexts(block));
    unitsByBlock.set(block, units);
  }
  return units;
}

function unitsOf(texts: readonly string[]): ReadonlySet<GroundingUnit> {
  const found = new Set<GroundingUnit>();
  for (const text of texts) {
    for (const line of text.split("\n")) {
      const anchor = anchorLine(line);
      if (anchor !== undefined) found.add(`line:${anchor}`);
    }
    for (const [token, kind] of distinctiveTokens(text)) {
      found.add(`token:${token}`);
      if (kind === "path") for (const tail of pathTails(token)) found.add(`token:${tail}`);
    }
  }
  return found;
}
