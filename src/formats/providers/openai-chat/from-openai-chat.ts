import type { ContentBlock, Message, TextBlock, ToolResultBlock } from "../../../model/message.ts";
import { listMetadata } from "../content-list.ts";
import { functionCallBlock, RawArguments } from "../function-arguments.ts";
import { imageDetail, mediaTypeFromUrl, parseDataUrl, providerFileUrl } from "../media.ts";
import { buildMessages, userDraft, type MessageDraft } from "../message-builder.ts";
import type { ImportOptions } from "../options.ts";
import { joinTextParts } from "../text-parts.ts";
import { decodeToolResultText } from "../tool-result-text.ts";
import { validatePayload } from "../validate-payload.ts";
import { ANNOTATIONS_KEY, contentListMetadata } from "./assistant-text.ts";
import { openAIChatMessagesSchema, type ParsedOpenAIChatMessage } from "./openai-chat-schema.ts";
import { reasoningBlocksOf } from "./reasoning-details.ts";
import { parseToolAttachmentsNote } from "./tool-attachments-note.ts";

type Parsed<Role extends ParsedOpenAIChatMessage["role"]> = Extract<ParsedOpenAIChatMessage, { role: Role }>;
type UserPart = Exclude<Parsed<"user">["content"], string>[number];

const AUDIO_MEDIA_TYPES = { wav: "audio/wav", mp3: "audio/mpeg" } as const;

function userBlock(part: UserPart): ContentBlock {
  switch (part.type) {
    case "text":
      return { type: "text", text: part.text };
    case "image_url": {
      const { url } = part.image_url;
      const detailed = imageDetail(part.image_url.detail);
      const inline = parseDataUrl(url);
      if (inline) return { type: "image", mediaType: inline.mediaType, data: inline.data, ...detailed };
      return { type: "image", mediaType: mediaTypeFromUrl(url, "image/*"), url, ...detailed };
    }
    case "file": {
      const { file_data: data, file_id: fileId, filename } = part.file;
      const named = filename === undefined ? {} : { filename };
      if (data !== undefined) {
        const inline = parseDataUrl(data) ?? { mediaType: "application/pdf", data };
        return { type: "file", mediaType: inline.mediaType, data: inline.data, ...named };
      }
      const mediaType = mediaTypeFromUrl(filename ?? "", "application/octet-stream");
      return { type: "file", mediaType, url: providerFileUrl({ openai: fileId ?? "" }), ...named };
    }
    case "input_audio":
      return {
        type: "file",
        mediaType: AUDIO_MEDIA_TYPES[part.input_audio.format],
        data: part.input_audio.data,
      };
  }
}

function textsOf(content: string | readonly { text: string }[]): ContentBlock[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return content.map((part) => ({ type: "text", text: part.text }));
}

function assistantTexts(message: Parsed<"assistant">): TextBlock[] {
  const content = message.content ?? "";
  const texts: TextBlock[] =
    typeof content === "string"
      ? content === ""
        ? []
        : [{ type: "text", text: content }]
      : content.map((part) =>
          part.type === "text"
            ? { type: "text", text: part.text }
            : { type: "text", text: part.refusal, refusal: true },
        );
  if (message.refusal) texts.push({ type: "text", text: message.refusal, refusal: true });
  return texts;
}

function assistantBlocks(
  message: Parsed<"assistant">,
  texts: readonly TextBlock[],
  rawArguments: RawArguments,
): ContentBlock[] {
  const blocks: ContentBlock[] = [...reasoningBlocksOf(message), ...texts];
  for (const call of message.tool_calls ?? []) {
    blocks.push(
      "custom" in call
        ? { type: "tool-call", id: call.id, name: call.custom.name, input: call.custom.input }
        : functionCallBlock(call.id, call.function.name, call.function.arguments, (text) =>
            rawArguments.parse(call.id, text),
          ),
    );
  }
  return blocks;
}

/**
 * The tool result a note-opened user message carries attachments for, when `message` is such a message (see
 * `toolAttachmentsNote`) and the result is in the run of tool messages just before it.
 */
function attachmentsTarget(
  message: Parsed<"user">,
  openResults: ReadonlyMap<string, number>,
): { draftIndex: number; media: ContentBlock[] } | undefined {
  if (typeof message.content === "string") return undefined;
  const [first, ...rest] = message.content;
  if (first?.type !== "text" || rest.length === 0 || rest.some((part) => part.type === "text"))
    return undefined;
  const callId = parseToolAttachmentsNote(first.text);
  const draftIndex = callId === undefined ? undefined : openResults.get(callId);
  return draftIndex === undefined ? undefined : { draftIndex, media: rest.map(userBlock) };
}

/**
 * Converts OpenAI Chat Completions `messages` to ctxkit messages, undoing every convention of `toOpenAIChat`:
 * `developer` becomes a system message (remembered in `metadata["openai.role"]`), wrapped summaries become
 * summary messages, `[tool error] ` becomes `isError`, compact JSON results become JSON, attachment notes are
 * folded back into their tool result, and tool names are looked up from the calls. Refusals become text blocks
 * marked `refusal`; image `detail`, an assistant content list and `annotations` are kept. Ids, sequence numbers,
 * turns and times are filled in from `options`.
 *
 * @example
 * const messages = fromOpenAIChat(body.messages, { sessionId: "imported" });
 */
export function fromOpenAIChat(payload: unknown, options: ImportOptions = {}): Message[] {
  const parsed = validatePayload(openAIChatMessagesSchema, payload, "messages", "OpenAI chat messages");
  const drafts: MessageDraft[] = [];
  const toolNames = new Map<string, string>();
  let openResults = new Map<string, number>();
  for (const message of parsed) {
    if (message.role === "tool") {
      // A list of text parts is joined, its part lengths kept so it goes back as the same list.
      const joined =
        typeof message.content === "string"
          ? { text: message.content }
          : joinTextParts(
              message.content.map((part) => part.text),
              false,
            );
      const block: ToolResultBlock = {
        type: "tool-result",
        callId: message.tool_call_id,
        toolName: toolNames.get(message.tool_call_id) ?? message.name ?? "",
        ...decodeToolResultText(joined.text, true),
      };
      openResults.set(message.tool_call_id, drafts.length);
      drafts.push({ role: "tool", content: [block], ...(joined.metadata && { metadata: joined.metadata }) });
      continue;
    }
    if (message.role === "user") {
      const target = attachmentsTarget(message, openResults);
      if (target !== undefined) {
        const draft = drafts[target.draftIndex]!;
        const result = draft.content[0] as ToolResultBlock;
        const attachments = [
          ...(result.attachments ?? []),
          ...target.media,
        ] as ToolResultBlock["attachments"];
        drafts[target.draftIndex] = { ...draft, content: [{ ...result, attachments }] };
        continue;
      }
      const blocks =
        typeof message.content === "string" ? textsOf(message.content) : message.content.map(userBlock);
      const metadata = listMetadata(message.content, blocks);
      drafts.push({ ...userDraft(blocks), ...(metadata && { metadata }) });
    } else if (message.role === "assistant") {
      const rawArguments = new RawArguments();
      const texts = assistantTexts(message);
      const content = assistantBlocks(message, texts, rawArguments);
      for (const block of content) if (block.type === "tool-call") toolNames.set(block.id, block.name);
      const metadata = {
        ...rawArguments.metadata(),
        ...(Array.isArray(message.content) && contentListMetadata(texts)),
        ...(message.annotations && { [ANNOTATIONS_KEY]: message.annotations }),
      };
      drafts.push({ role: "assistant", content, ...(Object.keys(metadata).length > 0 && { metadata }) });
    } else {
      const content = textsOf(message.content);
      const metadata = {
        ...(message.role === "developer" && { "openai.role": "developer" }),
        ...listMetadata(message.content, content),
      };
      drafts.push({ role: "system", content, ...(Object.keys(metadata).length > 0 && { metadata }) });
    }
    openResults = new Map();
  }
  return buildMessages(drafts, options);
}
