import type { LanguageModelV4Prompt, LanguageModelV4ToolResultOutput } from "@ai-sdk/provider";
import type { ContentBlock, JsonValue } from "../model/message.ts";
import type { CliPromptInput } from "./cli-prompt.ts";

function outputContent(output: LanguageModelV4ToolResultOutput): {
  content: string | JsonValue;
  isError: boolean;
} {
  switch (output.type) {
    case "text":
      return { content: output.value, isError: false };
    case "json":
      return { content: output.value as JsonValue, isError: false };
    case "error-text":
      return { content: output.value, isError: true };
    case "error-json":
      return { content: output.value as JsonValue, isError: true };
    case "execution-denied":
      return { content: `execution denied${output.reason ? `: ${output.reason}` : ""}`, isError: true };
    case "content":
      return {
        content: output.value.map((item) => (item.type === "text" ? item.text : `[${item.type}]`)).join("\n"),
        isError: false,
      };
  }
}

function fileBlock(mediaType: string, filename: string | undefined): ContentBlock {
  return mediaType.startsWith("image")
    ? { type: "image", mediaType, ref: "ai-sdk:file" }
    : { type: "file", mediaType, ref: "ai-sdk:file", ...(filename !== undefined && { filename }) };
}

/**
 * Reads an AI SDK (specification v4) prompt as messages `toCliPrompt` can render: text, tool calls and tool
 * results as they are, files as placeholders (a text-only CLI cannot receive them).
 *
 * @example
 * toCliPrompt(fromLanguageModelPrompt(options.prompt));
 */
export function fromLanguageModelPrompt(prompt: LanguageModelV4Prompt): CliPromptInput[] {
  return prompt.map((message): CliPromptInput => {
    if (message.role === "system") return { role: "system", content: message.content };
    const blocks: ContentBlock[] = [];
    for (const part of message.content) {
      if (part.type === "text") blocks.push({ type: "text", text: part.text });
      else if (part.type === "file") blocks.push(fileBlock(part.mediaType, part.filename));
      else if (part.type === "tool-call") {
        blocks.push({
          type: "tool-call",
          id: part.toolCallId,
          name: part.toolName,
          input: part.input as JsonValue,
        });
      } else if (part.type === "tool-result") {
        const { content, isError } = outputContent(part.output);
        blocks.push({
          type: "tool-result",
          callId: part.toolCallId,
          toolName: part.toolName,
          content,
          ...(isError && { isError }),
        });
      }
    }
    return { role: message.role, content: blocks };
  });
}
