import type { DynamicToolUIPart, FileUIPart, UIMessage } from "ai";
import { toolResultText } from "../../model/blocks.ts";
import { AI_SDK_OPAQUE_PROVIDER } from "../../formats/providers/ai-sdk/opaque-parts.ts";
import type { FileBlock, ImageBlock, JsonValue, Message, OpaqueBlock } from "../../model/message.ts";

type Part = UIMessage["parts"][number];

function filePart(block: ImageBlock | FileBlock): FileUIPart | undefined {
  const url = block.data !== undefined ? `data:${block.mediaType};base64,${block.data}` : block.url;
  if (url === undefined) return undefined;
  return {
    type: "file",
    mediaType: block.mediaType,
    url,
    ...(block.type === "file" && block.filename !== undefined && { filename: block.filename }),
  };
}

type Calls = Map<string, { message: UIMessage; index: number }>;

/** Completes the tool part of call `callId` with its output, or its error. */
function answer(calls: Calls, callId: string, outcome: { output: unknown } | { errorText: string }): void {
  const call = calls.get(callId);
  if (call === undefined) return;
  const { toolName, toolCallId, input, providerExecuted } = call.message.parts[
    call.index
  ] as DynamicToolUIPart;
  const base = {
    type: "dynamic-tool" as const,
    toolName,
    toolCallId,
    input,
    ...(providerExecuted === true && { providerExecuted }),
  };
  call.message.parts[call.index] =
    "errorText" in outcome
      ? { ...base, state: "output-error", errorText: outcome.errorText }
      : { ...base, state: "output-available", output: outcome.output };
}

/** What a provider-executed tool's result (an AI SDK `tool-result` part's `output`) shows. */
function providerOutcome(output: JsonValue | undefined): { output: unknown } | { errorText: string } {
  if (typeof output !== "object" || output === null || Array.isArray(output)) return { output };
  const value = output["value"];
  if (output["type"] === "error-text" || output["type"] === "error-json")
    return { errorText: typeof value === "string" ? value : JSON.stringify(value ?? null) };
  return { output: value };
}

/**
 * The AI SDK's own parts kept opaque: a provider-executed tool call becomes a `dynamic-tool` part marked
 * `providerExecuted`, its result completes it; other opaque blocks are not shown.
 */
function opaquePart(block: OpaqueBlock, ui: UIMessage, calls: Calls): void {
  if (block.provider !== AI_SDK_OPAQUE_PROVIDER) return;
  const { data } = block;
  const { toolCallId, toolName } = data;
  if (typeof toolCallId !== "string" || typeof toolName !== "string") return;
  if (data["type"] === "tool-call") {
    calls.set(toolCallId, { message: ui, index: ui.parts.length });
    ui.parts.push({
      type: "dynamic-tool",
      toolName,
      toolCallId,
      state: "input-available",
      input: data["input"],
      providerExecuted: true,
    });
  } else if (data["type"] === "tool-result") answer(calls, toolCallId, providerOutcome(data["output"]));
}

/**
 * Stored ctxkit messages (ones `saveChat` did not write) as UI messages: user text and files; assistant text,
 * reasoning, files and tool calls as `dynamic-tool` parts, completed by the tool messages that answer them (a tool
 * message joins the assistant message before it, as `useChat` shows a step). A provider-executed tool call and
 * its result (kept opaque by `fromAiSdk`) are one `dynamic-tool` part marked `providerExecuted`.
 */
export function uiMessagesOf(messages: readonly Message[]): UIMessage[] {
  const chat: UIMessage[] = [];
  const calls: Calls = new Map();
  for (const message of messages) {
    if (message.role === "tool") {
      for (const block of message.content)
        if (block.type === "tool-result")
          answer(
            calls,
            block.callId,
            block.isError === true ? { errorText: toolResultText(block.content) } : { output: block.content },
          );
      continue;
    }
    const parts: Part[] = [];
    const ui: UIMessage = { id: message.id, role: message.role, parts };
    for (const block of message.content) {
      switch (block.type) {
        case "text":
          parts.push({ type: "text", text: block.text });
          break;
        case "reasoning":
          if (block.redacted !== true) parts.push({ type: "reasoning", text: block.text });
          break;
        case "image":
        case "file": {
          const part = filePart(block);
          if (part !== undefined) parts.push(part);
          break;
        }
        case "tool-call":
          calls.set(block.id, { message: ui, index: parts.length });
          parts.push({
            type: "dynamic-tool",
            toolName: block.name,
            toolCallId: block.id,
            state: "input-available",
            input: block.input,
          });
          break;
        case "opaque":
          opaquePart(block, ui, calls);
          break;
        default:
          break;
      }
    }
    chat.push(ui);
  }
  return chat;
}
