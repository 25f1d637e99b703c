import type { ContentBlock, FileBlock, ImageBlock, JsonValue, ToolResultBlock } from "../../model/message.ts";
import type { CodexContentItem } from "./codex-records.ts";

/**
 * The content blocks of one OpenAI Responses content item: text (`input_text`, `output_text`, `refusal`) or an
 * image; other item kinds yield nothing.
 *
 * @example
 * codexContentBlocks({ type: "input_text", text: "hi" }); // [{ type: "text", text: "hi" }]
 */
export function codexContentBlocks(item: CodexContentItem): ContentBlock[] {
  if (item.type === "input_image" && item.image_url !== undefined) return [imageBlock(item.image_url)];
  const text = item.text ?? item.refusal;
  return text === undefined ? [] : [{ type: "text", text }];
}

/**
 * A tool output as the model saw it: a string as-is; a list of content items as their text joined by
 * newlines with images as attachments; any other JSON as structured content.
 *
 * @example
 * codexToolOutput("exit 0"); // { content: "exit 0" }
 */
export function codexToolOutput(
  output: string | readonly CodexContentItem[] | JsonValue,
): Pick<ToolResultBlock, "content" | "attachments"> {
  if (typeof output === "string") return { content: output };
  if (!isItemList(output)) return { content: output };
  const texts: string[] = [];
  const attachments: (ImageBlock | FileBlock)[] = [];
  for (const item of output) {
    for (const block of codexContentBlocks(item)) {
      if (block.type === "text") texts.push(block.text);
      else if (block.type === "image") attachments.push(block);
    }
  }
  return { content: texts.join("\n"), ...(attachments.length > 0 ? { attachments } : {}) };
}

function isItemList(value: unknown): value is readonly CodexContentItem[] {
  return (
    Array.isArray(value) &&
    value.every(
      (item) =>
        typeof item === "object" && item !== null && typeof (item as { type?: unknown }).type === "string",
    )
  );
}

/** An image block from an image URL, decoding `data:` URLs into media type and base64 data. */
export function imageBlock(url: string): ImageBlock {
  const inline = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (inline) return { type: "image", mediaType: inline[1]!, data: inline[2]! };
  return { type: "image", mediaType: "image/*", url };
}
