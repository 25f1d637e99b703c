import { z } from "zod";
import { validate } from "../../model/schemas.ts";
import type { ContentBlock, FileBlock, ImageBlock, Message } from "../../model/message.ts";
import { currentTurnStart } from "../../model/turns.ts";
import { AT_EVERY_CHECKPOINT, type Processor, type ProcessorContext } from "../processor.ts";
import { mapMessages, reportRewrite, withContent } from "../rewrite.ts";
import { RewriteMemo } from "../rewrite-memo.ts";

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

const NAME = "replace-older-binaries";
const optionsSchema = z.strictObject({});

/** Options of `createReplaceOlderBinaries` (none yet: present in a pipeline means on). */
export type ReplaceOlderBinariesOptions = z.input<typeof optionsSchema>;

function replaceBinaries(
  messages: readonly Message[],
  context: ProcessorContext,
  memo: RewriteMemo,
): readonly Message[] {
  const turnStart = currentTurnStart(messages);
  const result = mapMessages(messages, (message, index) =>
    index < turnStart && message.content.some(hasBinary)
      ? (memo.get(message) ?? memo.set(message, withContent(message, message.content.map(replaceBlock))))
      : undefined,
  );
  reportRewrite(context, "binaries-replaced", result);
  return result.messages;
}

/**
 * Replaces images and files in turns before the current one with a short placeholder naming what they were
 * (each costs thousands of tokens); the originals stay in the store. Runs at every checkpoint.
 *
 * @example
 * const pipeline = createPipeline({ processors: [createReplaceOlderBinaries()] });
 */
export function createReplaceOlderBinaries(options: ReplaceOlderBinariesOptions = {}): Processor {
  validate(optionsSchema, options, `${NAME} options`);
  const memo = new RewriteMemo();
  return {
    name: NAME,
    triggers: AT_EVERY_CHECKPOINT,
    process: (messages, context) => replaceBinaries(messages, context, memo),
  };
}
