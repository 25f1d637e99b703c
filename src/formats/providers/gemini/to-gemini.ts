import type { ContentBlock, FileBlock, ImageBlock, JsonValue, Message } from "../../../model/message.ts";
import { planExport, where, type UserEntry } from "../export-plan.ts";
import type { ExportOptions } from "../options.ts";
import { withPartOptions, type PartOptions } from "../part-options-carrier.ts";
import type {
  GeminiContent,
  GeminiFileDataPart,
  GeminiInlineDataPart,
  GeminiPart,
  GeminiPayload,
  GeminiTextPart,
} from "./gemini-content.ts";
import { toGeminiMedia } from "./gemini-media.ts";
import { functionResponseOf } from "./function-response.ts";
import { isGeneratedCallId } from "./generated-call-id.ts";

/** Options of `toGemini`. */
export interface GeminiExportOptions extends ExportOptions {
  /** Send call ids on `functionCall` and `functionResponse` (default `true`); `false` for APIs without them. */
  readonly callIds?: boolean;
}

function userParts(entry: UserEntry, options: ExportOptions): GeminiPart[] {
  return entry.blocks
    .map((block, position) =>
      block.type === "text"
        ? { text: block.text }
        : toGeminiMedia(
            block as ImageBlock | FileBlock,
            `${where(entry.index)}.content[${position}]`,
            options,
          ),
    )
    .filter((part) => !emptyText(part));
}

/** Gemini refuses a text part with no text (unless it carries a thought signature, which is sent back). */
function emptyText(part: GeminiPart): boolean {
  return "text" in part && part.text === "" && part.thoughtSignature === undefined;
}

/**
 * Appends a turn, leaving out one with no parts (Gemini refuses it: e.g. a reply that was only usage); a turn of
 * the same role as the one before it, once a turn between them was left out, is merged into it.
 */
function pushContent(contents: GeminiContent[], content: GeminiContent, state: { dropped: boolean }): void {
  if (content.parts.length === 0) {
    state.dropped = true;
    return;
  }
  const previous = contents.at(-1);
  if (state.dropped && previous !== undefined && previous.role === content.role) {
    contents[contents.length - 1] = { role: previous.role, parts: [...previous.parts, ...content.parts] };
  } else contents.push(content);
  state.dropped = false;
}

function carriedSignature(options: PartOptions | undefined): string | undefined {
  const value = options?.["google"]?.["thoughtSignature"] ?? options?.["vertex"]?.["thoughtSignature"];
  return typeof value === "string" ? value : undefined;
}

function idOf(id: string, options: GeminiExportOptions): { id?: string } {
  return options.callIds === false || isGeneratedCallId(id) ? {} : { id };
}

function args(input: JsonValue): { [key: string]: JsonValue } {
  // Gemini takes only objects as arguments; free-form (string) input is wrapped.
  return typeof input === "object" && input !== null && !Array.isArray(input) ? input : { input };
}

function modelPart(
  block: ContentBlock,
  signature: string | undefined,
  at: string,
  options: GeminiExportOptions,
): GeminiPart {
  const signed = signature === undefined ? {} : { thoughtSignature: signature };
  switch (block.type) {
    case "text":
      return { text: block.text, ...signed };
    case "reasoning": {
      // Another provider's signature is no thought signature (Gemini refuses it).
      const mine = block.signedBy === undefined || block.signedBy === "google" ? block.signature : undefined;
      const own = mine ?? signature;
      return { text: block.text, thought: true, ...(own !== undefined && { thoughtSignature: own }) };
    }
    case "tool-call":
      return {
        functionCall: { name: block.name, args: args(block.input), ...idOf(block.id, options) },
        ...signed,
      };
    case "image":
    case "file":
      return { ...toGeminiMedia(block, at, options), ...signed };
    case "tool-result":
      throw new Error("unreachable: planExport keeps tool results out of assistant messages");
    case "opaque":
      throw new Error("unreachable: planExport leaves out other providers' opaque blocks");
  }
}

function systemInstruction(messages: readonly Message[]): GeminiPayload["systemInstruction"] {
  const parts: GeminiTextPart[] = messages.flatMap((message) =>
    message.content.flatMap((block) => (block.type === "text" ? [{ text: block.text }] : [])),
  );
  return parts.length === 0 ? undefined : { parts };
}

/**
 * Converts ctxkit messages to Gemini `contents` plus `systemInstruction` (all system messages). Assistant
 * messages become `model` turns: reasoning as `thought` parts with their `thoughtSignature`, tool calls as
 * `functionCall` (signatures carried for the next part are restored). Consecutive tool messages become ONE
 * `user` turn of `functionResponse` parts (`{ output }` or `{ error }`, media in `parts`), followed in the same
 * turn by the user message right after them, if any. Call ids that `fromGemini` made up are left out again.
 * Gemini refuses empty text parts and turns without parts: empty text is left out, and so is a turn left empty
 * (a reply that was only usage), the turns around it merged when they then share a role.
 *
 * @example
 * const { systemInstruction, contents } = toGemini(history);
 */
export function toGemini(messages: readonly Message[], options: GeminiExportOptions = {}): GeminiPayload {
  const systems: Message[] = [];
  const contents: GeminiContent[] = [];
  const state = { dropped: false };
  const push = (content: GeminiContent) => pushContent(contents, content, state);
  for (const entry of planExport(messages, { ...options, format: "Gemini", mergeFollowingUser: true })) {
    if (entry.kind === "system") systems.push(entry.message);
    else if (entry.kind === "user") push({ role: "user", parts: userParts(entry, options) });
    else if (entry.kind === "assistant") {
      const parts = withPartOptions(entry.message.content)
        .map(({ block, options: carried }) =>
          modelPart(block, carriedSignature(carried), `${where(entry.index)}`, options),
        )
        .filter((part) => !emptyText(part));
      push({ role: "model", parts });
    } else {
      const notes: GeminiPart[] = [];
      const responses = entry.results.map(({ block, index }): GeminiPart => {
        const media: (GeminiInlineDataPart | GeminiFileDataPart)[] = [];
        for (const [position, attachment] of (block.attachments ?? []).entries()) {
          const part = toGeminiMedia(
            attachment,
            `${where(index)}.content[0].attachments[${position}]`,
            options,
          );
          if ("text" in part) notes.push(part);
          else media.push(part);
        }
        return {
          functionResponse: {
            name: block.toolName,
            response: functionResponseOf(block.content, block.isError),
            ...idOf(block.callId, options),
            ...(media.length > 0 && { parts: media }),
          },
        };
      });
      const following = entry.followingUser === undefined ? [] : userParts(entry.followingUser, options);
      push({ role: "user", parts: [...responses, ...notes, ...following] });
    }
  }
  const system = systemInstruction(systems);
  return { ...(system !== undefined && { systemInstruction: system }), contents };
}
