import type { ContentBlock, FileBlock, ImageBlock } from "../../model/message.ts";
import { currentTurnStart } from "../../model/turns.ts";
import type { Processor } from "../processor.ts";
import { mapMessages, reportRewrite, withContent } from "../rewrite.ts";

function placeholder(block: ImageBlock | FileBlock): string {
  const name = block.type === "file" && block.filename ? ` ${block.filename}` : "";
  const where = block.ref ? `; stored as ${block.ref}` : block.url ? `; at ${block.url}` : "";
  return `[${block.type}${name} (${block.mediaType}) omitted from context${where}]`;
}

function replaceBlock(block: ContentBlock): ContentBlock {
  if (block.type === "image" || block.type === "file") return { type: "text", text: placeholder(block) };
  if (block.type === "tool-result" && block.attachments?.length) {
    const notes = block.attachments.map(placeholder).join("\n");
    const { attachments: _attachments, ...rest } = block;
    return {
      ...rest,
      content: typeof block.content === "string" ? `${block.content}\n${notes}` : block.content,
    };
  }
  return block;
}

function hasBinary(block: ContentBlock): boolean {
  return (
    block.type === "image" ||
    block.type === "file" ||
    (block.type === "tool-result" && (block.attachments?.length ?? 0) > 0)
  );
}

/**
 * Replaces images and files in turns before the current one with a short placeholder naming what they were
 * (each costs thousands of tokens); the originals stay in the store.
 */
export const replaceOlderBinaries: Processor = {
  name: "replace-older-binaries",
  process(messages, context) {
    if (!context.policy.placeholderOlderBinaries) return messages;
    const turnStart = currentTurnStart(messages);
    const result = mapMessages(messages, (message, index) =>
      index < turnStart && message.content.some(hasBinary)
        ? withContent(message, message.content.map(replaceBlock))
        : undefined,
    );
    reportRewrite(context, "binaries-replaced", result);
    return result.messages;
  },
};
