import { UnsupportedError, ValidationError } from "../../errors/errors.ts";
import type { ContentBlock, Message, ToolResultBlock } from "../../model/message.ts";
import type { ExportOptions } from "./options.ts";
import { wrapSummary } from "./summary-envelope.ts";

/** A user-side message ready to send: its blocks with any summary envelope applied. */
export interface UserEntry {
  readonly kind: "user";
  readonly message: Message;
  readonly index: number;
  readonly blocks: readonly ContentBlock[];
}

/** One tool result and where it came from. */
export interface ToolResultEntry {
  readonly block: ToolResultBlock;
  readonly message: Message;
  readonly index: number;
}

/** What a converter walks over: markers dropped, summaries turned into user text, tool messages grouped. */
export type ExportEntry =
  | { readonly kind: "system"; readonly message: Message; readonly index: number }
  | UserEntry
  | { readonly kind: "assistant"; readonly message: Message; readonly index: number }
  | {
      readonly kind: "tools";
      readonly results: readonly ToolResultEntry[];
      /** The user message right after the tool messages, when the format sends both in one message. */
      readonly followingUser?: UserEntry;
    };

/** How `planExport` groups messages. */
export interface PlanOptions extends ExportOptions {
  /** Format name for error messages. */
  readonly format: string;
  /** Put a user message that directly follows tool messages into the same entry (Anthropic, Gemini). */
  readonly mergeFollowingUser?: boolean;
  /**
   * The provider whose opaque blocks the format sends back (`anthropic` for Anthropic Messages). Opaque blocks of
   * any other provider are left out, and so is a message that held nothing else: another provider's model
   * could not read them. Absent: every opaque block is left out.
   */
  readonly opaqueProvider?: string;
}

/** `messages[3]`: how errors name a message. */
export function where(index: number): string {
  return `messages[${index}]`;
}

function check(message: Message, index: number, format: string): void {
  const allowed: Readonly<Record<Message["role"], readonly ContentBlock["type"][]>> = {
    system: ["text"],
    user: ["text", "image", "file", "opaque"],
    assistant: ["text", "reasoning", "tool-call", "image", "file", "opaque"],
    tool: ["tool-result"],
  };
  const role = message.kind === "summary" ? "user" : message.role;
  for (const [position, block] of message.content.entries()) {
    if (allowed[role].includes(block.type)) continue;
    const at = `${where(index)}.content[${position}]`;
    if (role === "system")
      throw new UnsupportedError(`${at}: ${format} system messages hold only text, not ${block.type} blocks`);
    throw new ValidationError(
      `${at}: a ${role} message cannot hold a ${block.type} block; tool calls belong in assistant messages ` +
        "and tool results in tool messages",
      [{ path: at, message: `unexpected ${block.type} block in a ${role} message` }],
    );
  }
}

function userEntry(message: Message, index: number, options: PlanOptions): UserEntry {
  const summary = message.kind === "summary" && options.summaryEnvelope !== false;
  return { kind: "user", message, index, blocks: summary ? wrapSummary(message.content) : message.content };
}

/** `message` without the opaque blocks of providers other than `keep` (the same object when it holds none). */
function withoutForeignBlocks(message: Message, keep: string | undefined): Message {
  const foreign = (block: ContentBlock) => block.type === "opaque" && block.provider !== keep;
  if (!message.content.some(foreign)) return message;
  return { ...message, content: message.content.filter((block) => !foreign(block)) };
}

/**
 * Walks a ctxkit history in the order a provider payload needs it: markers are dropped, summaries become user
 * messages (wrapped in the summary envelope unless disabled), consecutive tool messages are grouped, and every
 * message is checked to hold only the blocks its role allows. Opaque blocks of providers other than
 * `opaqueProvider` are left out, with any message they leave empty.
 *
 * @example
 * for (const entry of planExport(messages, { format: "Anthropic" })) if (entry.kind === "tools") …
 */
export function planExport(messages: readonly Message[], options: PlanOptions): ExportEntry[] {
  const sent = messages.flatMap((message, index) => {
    if (message.kind === "marker") return [];
    check(message, index, options.format);
    const kept = withoutForeignBlocks(message, options.opaqueProvider);
    return kept.content.length === 0 && message.content.length > 0 ? [] : [{ message: kept, index }];
  });
  const isUserSide = (message: Message): boolean => message.role === "user" || message.kind === "summary";
  const isTool = (message: Message): boolean => message.role === "tool" && message.kind === undefined;
  const entries: ExportEntry[] = [];
  let position = 0;
  while (position < sent.length) {
    const { message, index } = sent[position]!;
    position++;
    if (isUserSide(message)) entries.push(userEntry(message, index, options));
    else if (!isTool(message)) entries.push({ kind: message.role as "system" | "assistant", message, index });
    else {
      const results: ToolResultEntry[] = [];
      const collect = (toolMessage: Message, toolIndex: number): void => {
        for (const block of toolMessage.content)
          if (block.type === "tool-result") results.push({ block, message: toolMessage, index: toolIndex });
      };
      collect(message, index);
      while (position < sent.length && isTool(sent[position]!.message)) {
        const next = sent[position]!;
        collect(next.message, next.index);
        position++;
      }
      const following = sent[position];
      if (options.mergeFollowingUser === true && following !== undefined && isUserSide(following.message)) {
        entries.push({
          kind: "tools",
          results,
          followingUser: userEntry(following.message, following.index, options),
        });
        position++;
      } else entries.push({ kind: "tools", results });
    }
  }
  return entries;
}
