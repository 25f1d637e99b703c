import { z } from "zod";
import { validate } from "../../model/schemas.ts";
import type { ContentBlock, JsonValue, Message, ToolCallBlock } from "../../model/message.ts";
import { outputKind } from "../../metrics/context-kind.ts";
import { primaryArgument } from "../../metrics/tool-call-label.ts";
import { newestUnprotected, offloadThresholds } from "../boundaries.ts";
import type { Processor, ProcessorContext } from "../processor.ts";
import { neededContext } from "../needed-context.ts";
import { RECALL_TOOL_NAME } from "../recall-tool.ts";
import { reportRewrite, withContent } from "../rewrite.ts";
import { AHEAD_WALK, AheadScan } from "../ahead-scan.ts";
import { RewriteMemo } from "../rewrite-memo.ts";
import { outputPreview } from "../tool-output-text.ts";

/** Marks an argument that was already elided (so it is never elided twice). */
const ELIDED = "[argument elided from the history after the call ran";

/** Lines of head and tail an elided argument keeps. */
const PREVIEW_LINES = 3;

/** The argument length above which an argument is elided: the tokens at about 4 characters each. */
function elisionLimitChars(aboveTokens: number): number {
  return aboveTokens * 4;
}

/**
 * Index from which tool calls are protected: the newest step, and before it the newest `protect` tokens of tool
 * traffic — results, and the elidable arguments of calls — so recent work stays verbatim however it splits.
 */
function protectedFrom(messages: readonly Message[], context: ProcessorContext, aboveTokens: number): number {
  return newestOutOfWindow(messages, context, aboveTokens) + 1;
}

/**
 * The newest message out of the protection window of tool traffic (results and elidable arguments), among the
 * newest `lookAt` messages.
 */
function newestOutOfWindow(
  messages: readonly Message[],
  context: ProcessorContext,
  aboveTokens: number,
  lookAt?: number,
): number {
  const traffic = (message: Message) =>
    message.role === "tool" ? context.tokensOf(message) : longInputTokens(message, aboveTokens);
  return newestUnprotected(messages, traffic, offloadThresholds(context).protect, lookAt);
}

/** `longInputTokens` of messages already measured (messages are immutable), with the limit it was for. */
const measured = new WeakMap<Message, { readonly aboveTokens: number; readonly tokens: number }>();

/**
 * Estimated tokens of the string arguments above `aboveTokens` in one message, the primary argument excepted (what
 * elision could shorten; 0 when `aboveTokens` is 0). Asked of the same messages on every request (the cache anchor,
 * the protection window): measured once per message.
 */
export function longInputTokens(message: Message, aboveTokens: number): number {
  if (message.role !== "assistant" || aboveTokens === 0) return 0;
  const known = measured.get(message);
  if (known?.aboveTokens === aboveTokens) return known.tokens;
  const tokens = measureLongInputs(message, aboveTokens);
  measured.set(message, { aboveTokens, tokens });
  return tokens;
}

function measureLongInputs(message: Message, aboveTokens: number): number {
  const limitChars = elisionLimitChars(aboveTokens);
  let chars = 0;
  for (const block of message.content) {
    if (!writesFile(block)) continue;
    const primary = primaryKey(block.input);
    forEachLongLeaf(block.input, primary, limitChars, (text) => (chars += text.length));
  }
  return Math.floor(chars / 4);
}

/**
 * True for the call of an edit or write tool: its long arguments are a file's text, which is on disk. The long
 * arguments of other calls (a subagent's brief, a long command) exist nowhere else, and agents copy from them.
 */
function writesFile(block: ContentBlock): block is ToolCallBlock {
  return block.type === "tool-call" && outputKind(block) === "edit";
}

function primaryKey(input: JsonValue): string | undefined {
  if (input === null || typeof input !== "object" || Array.isArray(input)) return undefined;
  const primary = primaryArgument(input);
  if (primary === undefined) return undefined;
  for (const [key, value] of Object.entries(input)) {
    if (typeof value === "string" && primaryArgument({ [key]: value }) === primary) return key;
  }
  return undefined;
}

/** True for a top-level argument worth eliding: a long string, not the primary argument, not elided already. */
function elidable(
  key: string,
  value: JsonValue,
  primary: string | undefined,
  limitChars: number,
): value is string {
  return key !== primary && typeof value === "string" && value.length > limitChars && !value.includes(ELIDED);
}

function forEachLongLeaf(
  input: JsonValue,
  skipKey: string | undefined,
  limitChars: number,
  visit: (text: string) => void,
): void {
  if (input === null || typeof input !== "object" || Array.isArray(input)) return;
  for (const [key, value] of Object.entries(input))
    if (elidable(key, value, skipKey, limitChars)) visit(value);
}

/**
 * The reference of each long argument of `message`'s edit and write calls, by its text, as `refOf` gives it (the
 * offload store's `putText` at a checkpoint, its `refFor` when prepared ahead; undefined without a store).
 */
async function argumentRefs(
  message: Message,
  limitChars: number,
  refOf: (text: string) => string | undefined | Promise<string | undefined>,
): Promise<Map<string, string | undefined>> {
  const refs = new Map<string, string | undefined>();
  for (const block of message.content) {
    if (!writesFile(block)) continue;
    forEachLongLeaf(block.input, primaryKey(block.input), limitChars, (text) => refs.set(text, undefined));
  }
  for (const text of refs.keys()) refs.set(text, await refOf(text));
  return refs;
}

function elideCall(
  block: ToolCallBlock,
  limitChars: number,
  refs: ReadonlyMap<string, string | undefined>,
  recallable: boolean,
): ToolCallBlock {
  const input = block.input;
  if (input === null || typeof input !== "object" || Array.isArray(input)) return block;
  const primary = primaryKey(input);
  const next: Record<string, JsonValue> = {};
  let changed = false;
  for (const [key, value] of Object.entries(input)) {
    if (!elidable(key, value, primary, limitChars)) {
      next[key] = value;
      continue;
    }
    const ref = refs.get(value);
    const lines = value.split("\n").length;
    const recall = ref === undefined || !recallable ? "" : `; ${RECALL_TOOL_NAME}("${ref}") returns it`;
    next[key] =
      `${outputPreview(value, PREVIEW_LINES, false)}\n${ELIDED}: ${value.length} characters, ${lines} lines${recall}]`;
    changed = true;
  }
  return changed ? { ...block, input: next } : block;
}

/**
 * `message` with the long arguments of its edit and write calls elided: made once per message and references
 * (`memo`), so a checkpoint considered again does not build and count it again.
 */
async function elidedMessage(
  message: Message,
  limitChars: number,
  context: ProcessorContext,
  memo: RewriteMemo,
  refOf: (text: string) => string | undefined | Promise<string | undefined>,
): Promise<Message> {
  const refs = await argumentRefs(message, limitChars, refOf);
  const recallable = context.recall !== false;
  const key = [String(recallable), ...refs.values()].join("\0");
  const known = memo.get(message, key);
  if (known !== undefined) return known;
  const content = message.content.map((block) =>
    writesFile(block) ? elideCall(block, limitChars, refs, recallable) : block,
  );
  return memo.set(message, withContent(message, content), key);
}

const NAME = "elide-older-tool-inputs";
const optionsSchema = z.strictObject({
  /** String arguments of older tool calls above this many tokens are shortened to a preview. */
  aboveTokens: z.number().int().positive(),
});

/** Options of `createElideOlderToolInputs`. */
export type ElideOlderToolInputsOptions = z.input<typeof optionsSchema>;

async function elide(
  aboveTokens: number,
  messages: readonly Message[],
  context: ProcessorContext,
  memo: RewriteMemo,
): Promise<readonly Message[]> {
  const protectedStep = protectedFrom(messages, context, aboveTokens);
  // The text of an edit or write stays while the agent is likely to work from it again.
  const needed = neededContext(messages, context);
  let output: Message[] | undefined;
  const originals: Message[] = [];
  const replacements: Message[] = [];
  for (let index = 0; index < protectedStep; index++) {
    const message = messages[index]!;
    if (needed.has(index) || longInputTokens(message, aboveTokens) === 0) continue;
    const replacement = await elidedMessage(message, elisionLimitChars(aboveTokens), context, memo, (text) =>
      context.offloadStore?.putText(text),
    );
    if (context.tokensOf(replacement) >= context.tokensOf(message)) continue;
    output ??= [...messages];
    output[index] = replacement;
    originals.push(message);
    replacements.push(replacement);
  }
  if (!output) return messages;
  reportRewrite(context, "tool-inputs-elided", { messages: output, originals, replacements });
  return output;
}

/**
 * Builds the elided form of the edit and write calls that just left the protection window, a couple per request,
 * under the references the store will give their arguments (`refFor`), so the checkpoint that elides them finds
 * them made (`memo`) and counted; returns them to be counted. Nothing is stored and the view is not changed.
 */
async function prepareAhead(
  aboveTokens: number,
  messages: readonly Message[],
  context: ProcessorContext,
  memo: RewriteMemo,
  ahead: AheadScan,
): Promise<Message[]> {
  const store = context.offloadStore;
  if (store?.refFor === undefined) return [];
  const from = newestOutOfWindow(messages, context, aboveTokens, AHEAD_WALK);
  return ahead.build(messages, from, store, "assistant", async (message) =>
    longInputTokens(message, aboveTokens) === 0
      ? undefined
      : elidedMessage(message, elisionLimitChars(aboveTokens), context, memo, (text) => store.refFor!(text)),
  );
}

/**
 * Shortens long arguments of older edit and write calls — the content of a file write, the old and new text of an
 * edit — to a preview (head and tail lines, error lines, file paths) once the call ran and its step left the
 * protection window of recent tool output and the agent is no longer likely to edit from it (`neededContext`).
 * The call's name and primary argument (the file) stay intact; the full argument goes to the offload store.
 * Written files are on disk: the history does not need a second copy of them in every request. Other calls' long
 * arguments (a subagent's brief, a long command) exist nowhere else and are left alone.
 * Runs at every checkpoint, and declares that arguments above `aboveTokens` count as tool traffic piling up
 * toward an optional checkpoint (a `tool-input` trigger). Throws `ValidationError` for bad options.
 *
 * @example
 * const pipeline = createPipeline({ processors: [createElideOlderToolInputs({ aboveTokens: 250 })] });
 */
export function createElideOlderToolInputs(options: ElideOlderToolInputsOptions): Processor {
  const { aboveTokens } = validate(optionsSchema, options, `${NAME} options`);
  const memo = new RewriteMemo();
  const ahead = new AheadScan();
  return {
    name: NAME,
    options: { aboveTokens },
    offloads: true,
    triggers: [{ kind: "checkpoint" }, { kind: "tool-input", above: aboveTokens }],
    process: (messages, context) => elide(aboveTokens, messages, context, memo),
    prepareAhead: (messages, context) => prepareAhead(aboveTokens, messages, context, memo, ahead),
  };
}
