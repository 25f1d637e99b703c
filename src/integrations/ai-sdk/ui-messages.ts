import type { DynamicToolUIPart, FileUIPart, UIMessage } from "ai";
import { toolResultText } from "../../model/blocks.ts";
import type { FileBlock, ImageBlock, Message } from "../../model/message.ts";

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

/**
 * Stored ctxkit messages (ones `saveChat` did not write) as UI messages: user text and files; assistant text,
 * reasoning, files and tool calls as `dynamic-tool` parts, completed by the tool messages that answer them (a tool
 * message joins the assistant message before it, as `useChat` shows a step).
 */
export function uiMessagesOf(messages: readonly Message[]): UIMessage[] {
  const chat: UIMessage[] = [];
  const calls = new Map<string, { message: UIMessage; index: number }>();
  for (const message of messages) {
    if (message.role === "tool") {
      for (const block of message.content) {
        if (block.type !== "tool-result") continue;
        const call = calls.get(block.callId);
        if (call === undefined) continue;
        const { toolName, toolCallId, input } = call.message.parts[call.index] as DynamicToolUIPart;
        const base = { type: "dynamic-tool" as const, toolName, toolCallId, input };
        call.message.parts[call.index] =
          block.isError === true
            ? { ...base, state: "output-error", errorText: toolResultText(block.content) }
            : { ...base, state: "output-available", output: block.content };
      }
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
        default:
          break;
      }
    }
    chat.push(ui);
  }
  return chat;
}
