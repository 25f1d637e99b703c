// ctxkit messages to LangChain messages and back, for the LangChain.js replay (langchain.ts). Going in, a
// recorded reply (one or more consecutive assistant messages) becomes one AIMessage and each tool result one
// ToolMessage, all carrying ctxkit ids; coming back, a LangChain message is mapped to the ctxkit messages it was
// made from, so a view keeps the recorded messages themselves (reasoning, images and all) except where a
// middleware changed them: a cleared tool result or a summary.
import {
  AIMessage,
  type BaseMessage,
  type ContentBlock,
  getBufferString,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from "@langchain/core/messages";
import { mediaPlaceholder } from "../../src/formats/providers/media.ts";
import { withContent } from "../../src/governance/rewrite.ts";
import { toolResultText } from "../../src/model/blocks.ts";
import type {
  ContentBlock as CtxkitBlock,
  JsonValue,
  Message,
  ToolResultBlock,
} from "../../src/model/message.ts";

/** Text standing in for an image or file: LangChain's middleware counts and summarises text only. */
function mediaText(block: CtxkitBlock): string {
  return block.type === "image" || block.type === "file" ? mediaPlaceholder(block, "replayed as text") : "";
}

/** The plain text of a user or system message, media as placeholders. */
function plainText(message: Message): string {
  return message.content
    .map((block) => (block.type === "text" ? block.text : mediaText(block)))
    .filter((text) => text !== "")
    .join("\n");
}

/** A tool call's arguments as LangChain wants them (an object); free-form input is wrapped as `{ input }`. */
function callArgs(input: JsonValue): Record<string, unknown> {
  return typeof input === "object" && input !== null && !Array.isArray(input) ? input : { input };
}

/**
 * The AIMessage a recorded reply becomes: its text, its reasoning as Anthropic-style `thinking` blocks (how
 * LangChain's Anthropic integration returns it; LangChain's middleware neither counts nor summarises them) and
 * every tool call.
 */
export function replyToLangChain(reply: readonly Message[]): AIMessage {
  const content: ContentBlock[] = [];
  const toolCalls: { id: string; name: string; args: Record<string, unknown>; type: "tool_call" }[] = [];
  for (const block of reply.flatMap((message) => message.content)) {
    if (block.type === "text" && block.text !== "") content.push({ type: "text", text: block.text });
    else if (block.type === "reasoning" && !block.redacted && block.text !== "")
      content.push({ type: "thinking", thinking: block.text, signature: block.signature ?? "" });
    else if (block.type === "tool-call")
      toolCalls.push({ id: block.id, name: block.name, args: callArgs(block.input), type: "tool_call" });
  }
  const [only] = content;
  return new AIMessage({
    id: reply[0]!.id,
    // One text block is a string, as chat models return plain text; otherwise the blocks as Anthropic's are.
    content:
      content.length === 0
        ? ""
        : content.length === 1 && only?.type === "text"
          ? String(only["text"])
          : content,
    tool_calls: toolCalls,
  });
}

/** The result blocks of tool messages. */
function resultsOf(messages: readonly Message[]): ToolResultBlock[] {
  return messages.flatMap((message) =>
    message.content.filter((block): block is ToolResultBlock => block.type === "tool-result"),
  );
}

/** The ToolMessage for one call: its recorded result (several recorded messages joined), media as text. */
export function resultToLangChain(callId: string, name: string, results: readonly Message[]): ToolMessage {
  const blocks = resultsOf(results);
  const text = blocks
    .map((block) =>
      [toolResultText(block.content), ...(block.attachments ?? []).map(mediaText)].filter(Boolean).join("\n"),
    )
    .join("\n");
  return new ToolMessage({
    id: results[0]!.id,
    tool_call_id: callId,
    name,
    content: text,
    status: blocks.some((block) => block.isError === true) ? "error" : "success",
  });
}

/** A user or system message (or a tool result no call asked for) given to the agent as input. */
export function inputToLangChain(message: Message): BaseMessage {
  if (message.role === "system") return new SystemMessage({ id: message.id, content: plainText(message) });
  if (message.role === "tool") {
    const block = resultsOf([message])[0];
    return resultToLangChain(block?.callId ?? message.id, block?.toolName ?? "tool", [message]);
  }
  if (message.role === "assistant") return replyToLangChain([message]);
  return new HumanMessage({ id: message.id, content: plainText(message) });
}

/** A result block whose output is `text` alone (no attachments, no stored full output). */
function resultWithText(block: ToolResultBlock, text: string): ToolResultBlock {
  return {
    type: "tool-result",
    callId: block.callId,
    toolName: block.toolName,
    content: text,
    ...(block.isError === true && { isError: true }),
  };
}

/** Marks that LangChain's middleware put on what it made. */
function isSummary(message: BaseMessage): boolean {
  return HumanMessage.isInstance(message) && message.additional_kwargs?.["lc_source"] === "summarization";
}

function isCleared(message: BaseMessage): boolean {
  const metadata = message.response_metadata as { context_editing?: { cleared?: boolean } } | undefined;
  const editing = metadata?.context_editing;
  return ToolMessage.isInstance(message) && editing?.cleared === true;
}

/** The text of a LangChain message's content (text blocks only). */
export function langChainText(message: BaseMessage): string {
  if (typeof message.content === "string") return message.content;
  return message.content
    .map((part) => (typeof part === "string" ? part : part.type === "text" ? String(part.text) : ""))
    .join("");
}

/**
 * Remembers which ctxkit messages each LangChain message was made from, and turns what a LangChain model
 * received back into ctxkit messages.
 */
export class MessageLedger {
  readonly #sources = new Map<string, readonly Message[]>();
  /** Summary messages already made, by text, so a summary kept across requests is the same message. */
  readonly #summaries = new Map<string, Message>();
  /** Every LangChain message registered, oldest first, with its ctxkit sources (for `parseSummaryPrompt`). */
  readonly #known: { readonly message: BaseMessage; text?: string; readonly sources: readonly Message[] }[] =
    [];
  /** Tool results by the id of the reply that called them and the call id (cleared copies lose their own id). */
  readonly #results = new Map<string, readonly Message[]>();
  #summaryCount = 0;

  /** Records that `message` (which must carry an id) stands for `sources`; returns it. */
  register<T extends BaseMessage>(message: T, sources: readonly Message[]): T {
    this.#sources.set(message.id!, sources);
    this.#known.push({ message, sources });
    return message;
  }

  /** Records a tool result made for the call `callId` of the reply registered as `replyId`. */
  registerResult(message: ToolMessage, sources: readonly Message[], replyId: string): ToolMessage {
    this.#results.set(`${replyId}\n${message.tool_call_id}`, sources);
    return this.register(message, sources);
  }

  /** The ctxkit view of what a LangChain model received. */
  toCtxkit(
    messages: readonly BaseMessage[],
    systemPrompt?: { text: string; sources: readonly Message[] },
  ): Message[] {
    const view: Message[] = [];
    messages.forEach((message, index) => {
      if (
        index === 0 &&
        systemPrompt &&
        SystemMessage.isInstance(message) &&
        langChainText(message) === systemPrompt.text
      ) {
        view.push(...systemPrompt.sources);
        return;
      }
      if (isSummary(message)) {
        view.push(this.#summaryMessage(message));
        return;
      }
      const sources = isCleared(message)
        ? this.#clearedSources(messages.slice(0, index), message as ToolMessage)
        : message.id === undefined
          ? undefined
          : this.#sources.get(message.id);
      if (sources === undefined)
        throw new Error(
          `LangChain replay: the model received a message it was never given (${message.type} ${message.id})`,
        );
      if (!isCleared(message)) {
        view.push(...sources);
        return;
      }
      // Context editing replaced the result's content with its placeholder, for this request only.
      const placeholder = langChainText(message);
      const first = sources[0]!;
      view.push(
        withContent(
          first,
          first.content.map((block) =>
            block.type === "tool-result" ? resultWithText(block, placeholder) : block,
          ),
        ),
      );
    });
    return view;
  }

  /**
   * The ctxkit messages a summary prompt's history holds. `body` is LangChain's rendering of the messages the
   * middleware asked to summarise (`getBufferString`, one line-joined entry per message); it is matched back,
   * newest first, against every message registered. Text that matches none (the oldest message when the
   * middleware's trim cut it) is kept as one user message, so the summarizer reads exactly what the prompt holds.
   */
  parse(body: string): Message[] {
    const found: (readonly Message[])[] = [];
    let end = body.length;
    let next = this.#known.length - 1;
    while (end > 0) {
      const head = body.slice(0, end);
      const fits = (index: number): boolean => {
        const text = this.#textOf(index);
        return head.endsWith(text) && (text.length === end || head[end - text.length - 1] === "\n");
      };
      let match = -1;
      // Usually the message registered just before the last match; a summary was registered after the messages
      // it precedes in the state, so fall back to the whole list.
      for (let index = next; index >= 0 && match < 0; index--) if (fits(index)) match = index;
      for (let index = this.#known.length - 1; index > next && match < 0; index--)
        if (fits(index)) match = index;
      if (match < 0) break;
      found.unshift(this.#known[match]!.sources);
      end -= this.#textOf(match).length + 1;
      next = match - 1;
    }
    const messages = found.flat();
    if (end > 0) messages.unshift(this.#partial(body.slice(0, end), next, messages[0]));
    return messages;
  }

  /**
   * The oldest message of a summary prompt when the middleware's trim kept only its end: the registered message
   * it is the end of, cut to what the prompt holds (a summary stays a summary), or else the text as a user
   * message.
   */
  #partial(text: string, next: number, after: Message | undefined): Message {
    const order = [...this.#known.keys()].reverse();
    order.sort((a, b) => Number(a > next) - Number(b > next));
    for (const index of order) {
      const { message, sources } = this.#known[index]!;
      if (sources.length !== 1 || typeof message.content !== "string") continue;
      const rendered = this.#textOf(index);
      if (!rendered.endsWith(message.content)) continue;
      const prefix = rendered.slice(0, rendered.length - message.content.length);
      const tail = text.slice(prefix.length);
      if (!text.startsWith(prefix) || !message.content.endsWith(tail)) continue;
      const source = sources[0]!;
      return withContent(
        source,
        source.content
          .filter((block) => block.type === "text" || block.type === "tool-result")
          .slice(0, 1)
          .map((block) =>
            block.type === "tool-result" ? resultWithText(block, tail) : { type: "text", text: tail },
          ),
      );
    }
    return Object.freeze({
      id: `langchain-partial-${after?.id ?? "history"}`,
      sessionId: after?.sessionId ?? "langchain",
      seq: (after?.seq ?? 1) - 1,
      turn: after?.turn ?? 0,
      role: "user",
      content: Object.freeze([{ type: "text", text }]),
      createdAt: after?.createdAt ?? new Date(0).toISOString(),
    } satisfies Message);
  }

  /**
   * How LangChain renders a registered message for its summary prompt, computed when first needed: the agent
   * names its model's reply ("model") after the model returned it.
   */
  #textOf(index: number): string {
    const entry = this.#known[index]!;
    entry.text ??= getBufferString([entry.message]);
    return entry.text;
  }

  /** What a cleared result was: the result of its call in the nearest earlier reply that made the call. */
  #clearedSources(before: readonly BaseMessage[], message: ToolMessage): readonly Message[] | undefined {
    for (let index = before.length - 1; index >= 0; index--) {
      const reply = before[index]!;
      if (AIMessage.isInstance(reply) && reply.tool_calls?.some((call) => call.id === message.tool_call_id))
        return this.#results.get(`${reply.id}\n${message.tool_call_id}`);
    }
    return undefined;
  }

  /** The ctxkit summary message for LangChain's summary message (one per distinct summary). */
  #summaryMessage(message: BaseMessage): Message {
    const text = langChainText(message);
    let summary = this.#summaries.get(text);
    if (summary === undefined) {
      // The middleware gives its summary the id of the first message it replaced.
      const first = this.#sources.get(message.id ?? "")?.[0];
      summary = Object.freeze({
        id: `langchain-summary-${++this.#summaryCount}`,
        sessionId: first?.sessionId ?? "langchain",
        seq: first?.seq ?? 0,
        turn: first?.turn ?? 0,
        role: "user",
        kind: "summary",
        content: Object.freeze([{ type: "text", text }]),
        createdAt: first?.createdAt ?? new Date(0).toISOString(),
      } satisfies Message);
      this.#summaries.set(text, summary);
      this.register(new HumanMessage({ id: summary.id, content: text }), [summary]);
    }
    return summary;
  }
}
