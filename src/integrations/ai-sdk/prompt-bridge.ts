import { createHash } from "node:crypto";
import type {
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4ToolResultOutput,
  LanguageModelV4ToolResultPart,
} from "@ai-sdk/provider";
import { canonicalJson } from "../../model/blocks.ts";
import type { ContentBlock, JsonValue, Message, ToolResultBlock } from "../../model/message.ts";

type Part = Exclude<LanguageModelV4Message["content"][number], string>;

/** A prompt seen as ctxkit messages, with what is needed to rebuild untouched parts exactly. */
export interface BridgedPrompt {
  readonly messages: Message[];
  /** The original V4 parts behind each message's blocks (same order), for byte-identical output. */
  readonly origins: ReadonlyMap<Message, readonly { block: ContentBlock; part: Part }[]>;
  /** The original V4 message of each bridged message (tool messages share theirs). */
  readonly sources: ReadonlyMap<Message, LanguageModelV4Message>;
  /** Each bridged message by id (ids depend on position and content, so equal prompts share them). */
  readonly byId: ReadonlyMap<string, Message>;
}

function outputToResult(part: LanguageModelV4ToolResultPart): ToolResultBlock {
  const output = part.output;
  const base = { type: "tool-result" as const, callId: part.toolCallId, toolName: part.toolName };
  switch (output.type) {
    case "text":
      return { ...base, content: output.value };
    case "json":
      return { ...base, content: output.value as JsonValue };
    case "error-text":
      return { ...base, content: output.value, isError: true };
    case "error-json":
      return { ...base, content: output.value as JsonValue, isError: true };
    case "execution-denied":
      return {
        ...base,
        content: `[execution denied${output.reason ? `: ${output.reason}` : ""}]`,
        isError: true,
      };
    case "content":
      return {
        ...base,
        content: output.value.map((item) => (item.type === "text" ? item.text : `[${item.type}]`)).join("\n"),
      };
    default:
      return { ...base, content: canonicalJson(output) };
  }
}

/** The V4 output for a (possibly governed) ctxkit tool result. */
export function resultToOutput(block: ToolResultBlock): LanguageModelV4ToolResultOutput {
  if (typeof block.content === "string") {
    return { type: block.isError ? "error-text" : "text", value: block.content };
  }
  return { type: block.isError ? "error-json" : "json", value: block.content as never };
}

function partToBlock(part: Part): ContentBlock | undefined {
  switch (part.type) {
    case "text":
      return { type: "text", text: part.text };
    case "reasoning":
      return { type: "reasoning", text: part.text };
    case "tool-call":
      return { type: "tool-call", id: part.toolCallId, name: part.toolName, input: part.input as JsonValue };
    case "file": {
      const mediaType = part.mediaType;
      const ref = "ai-sdk:file";
      return mediaType.startsWith("image/")
        ? { type: "image", mediaType, ref }
        : { type: "file", mediaType, ref };
    }
    default:
      return undefined;
  }
}

/**
 * Reads an AI SDK (v4 specification) prompt as ctxkit messages. Ids are derived from position and content, so
 * the same prompt growing at its end across agent steps keeps its ids (the governor relies on that).
 */
export function bridgePrompt(prompt: LanguageModelV4Prompt, sessionId: string): BridgedPrompt {
  const messages: Message[] = [];
  const origins = new Map<Message, { block: ContentBlock; part: Part }[]>();
  const sources = new Map<Message, LanguageModelV4Message>();
  const byId = new Map<string, Message>();
  let turn = 0;
  const push = (
    source: LanguageModelV4Message,
    role: Message["role"],
    pairs: { block: ContentBlock; part: Part }[],
    key: string,
  ) => {
    const seq = messages.length;
    const id = `p${seq}_${createHash("sha256").update(key).digest("hex").slice(0, 16)}`;
    if (role === "user") turn++;
    const message: Message = Object.freeze({
      id,
      sessionId,
      seq,
      turn,
      role,
      content: pairs.map((pair) => pair.block),
      createdAt: "1970-01-01T00:00:00.000Z",
    });
    messages.push(message);
    origins.set(message, pairs);
    sources.set(message, source);
    byId.set(id, message);
  };
  for (const source of prompt) {
    if (source.role === "system") {
      const part: Part = { type: "text", text: source.content };
      push(
        source,
        "system",
        [{ block: { type: "text", text: source.content }, part }],
        `system:${source.content}`,
      );
      continue;
    }
    if (source.role === "tool") {
      for (const part of source.content) {
        if (part.type !== "tool-result") continue;
        push(source, "tool", [{ block: outputToResult(part), part }], `tool:${canonicalJson(part)}`);
      }
      continue;
    }
    const pairs: { block: ContentBlock; part: Part }[] = [];
    for (const part of source.content) {
      const block = partToBlock(part);
      if (block) pairs.push({ block, part });
    }
    push(source, source.role, pairs, `${source.role}:${canonicalJson(source.content)}`);
  }
  return { messages, origins, sources, byId };
}

function rebuildPart(
  block: ContentBlock,
  origin: { block: ContentBlock; part: Part } | undefined,
): Part | undefined {
  if (origin && origin.block === block) return origin.part;
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "reasoning":
      return { type: "reasoning", text: block.text };
    case "tool-call":
      return { type: "tool-call", toolCallId: block.id, toolName: block.name, input: block.input };
    case "tool-result":
      return {
        type: "tool-result",
        toolCallId: block.callId,
        toolName: block.toolName,
        output: resultToOutput(block),
      };
    default:
      return origin?.part;
  }
}

/**
 * Writes governed ctxkit messages back as an AI SDK prompt. Messages governance did not touch come out as the
 * very parts they came from; consecutive tool messages are merged into one tool message, as the SDK expects.
 * `untouched` recognises a message bridged by an earlier call and kept as it was (the governor's view keeps
 * those objects): it comes out as this call's message with the same id, provider options included.
 */
export function unbridgePrompt(
  governed: readonly Message[],
  bridge: BridgedPrompt,
  untouched: (message: Message) => boolean = () => false,
): LanguageModelV4Prompt {
  const prompt: LanguageModelV4Prompt = [];
  for (const kept of governed) {
    const message = bridge.origins.has(kept) || !untouched(kept) ? kept : (bridge.byId.get(kept.id) ?? kept);
    const origins = bridge.origins.get(message) ?? [];
    const source = bridge.sources.get(message);
    if (message.role === "system") {
      prompt.push({
        role: "system",
        content: message.content.map((block) => (block.type === "text" ? block.text : "")).join("\n"),
      });
      continue;
    }
    if (
      source &&
      source.role !== "tool" &&
      origins.length === message.content.length &&
      origins.every((origin, index) => origin.block === message.content[index])
    ) {
      prompt.push(source);
      continue;
    }
    const findOrigin = (block: ContentBlock, index: number) =>
      origins.find((origin) => origin.block === block) ??
      (origins[index]?.block.type === block.type ? origins[index] : undefined);
    const parts = message.content
      .map((block, index) =>
        rebuildPart(block, block === origins[index]?.block ? origins[index] : findOrigin(block, index)),
      )
      .filter((part): part is Part => part !== undefined);
    if (message.role === "tool") {
      const previous = prompt.at(-1);
      const results = parts.filter(
        (part): part is LanguageModelV4ToolResultPart => part.type === "tool-result",
      );
      if (previous?.role === "tool") previous.content.push(...results);
      else prompt.push({ role: "tool", content: results });
      continue;
    }
    if (message.role === "user") {
      prompt.push({
        role: "user",
        content: parts.filter((part) => part.type === "text" || part.type === "file"),
      });
    } else {
      prompt.push({ role: "assistant", content: parts as never });
    }
  }
  return prompt;
}
