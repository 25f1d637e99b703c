// The same history in each peer library's own message type, converted once outside the timed part.
import {
  AIMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  type BaseMessage,
} from "@langchain/core/messages";
import type { ModelMessage } from "ai";
import { toAiSdk } from "../../src/formats/providers/ai-sdk/index.ts";
import type { Message } from "../../src/model/message.ts";

/** ctxkit messages as AI SDK `ModelMessage`s (system messages dropped: the bench histories have none). */
export function toModelMessages(messages: readonly Message[]): ModelMessage[] {
  return toAiSdk(
    messages.filter((message) => message.role !== "system"),
    { references: "placeholder" },
  ).messages;
}

function partText(part: unknown): string {
  const value = part as { type: string; text?: string; output?: { value?: unknown } };
  if (value.type === "text" || value.type === "reasoning") return value.text ?? "";
  if (value.type === "tool-result") {
    const output = value.output?.value;
    return typeof output === "string" ? output : JSON.stringify(output ?? "");
  }
  return "";
}

/** AI SDK messages as LangChain.js messages (one `ToolMessage` per tool result). */
export function toLangChain(messages: readonly ModelMessage[]): BaseMessage[] {
  const output: BaseMessage[] = [];
  for (const message of messages) {
    const parts =
      typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
    if (message.role === "system") output.push(new SystemMessage(parts.map(partText).join("\n")));
    else if (message.role === "user") output.push(new HumanMessage(parts.map(partText).join("\n")));
    else if (message.role === "assistant") {
      const calls = (parts as { type: string; toolCallId?: string; toolName?: string; input?: unknown }[])
        .filter((part) => part.type === "tool-call")
        .map((part) => ({
          id: part.toolCallId!,
          name: part.toolName!,
          args: (typeof part.input === "object" && part.input !== null
            ? part.input
            : { input: part.input }) as Record<string, unknown>,
        }));
      output.push(new AIMessage({ content: parts.map(partText).join(""), tool_calls: calls }));
    } else {
      for (const part of parts as { type: string; toolCallId?: string }[]) {
        if (part.type !== "tool-result") continue;
        output.push(new ToolMessage({ content: partText(part), tool_call_id: part.toolCallId! }));
      }
    }
  }
  return output;
}
