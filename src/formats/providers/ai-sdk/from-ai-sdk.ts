import type { ContentBlock, FileBlock, ImageBlock, JsonValue, Message } from "../../../model/message.ts";
import { buildMessages, userDraft, type MessageDraft } from "../message-builder.ts";
import type { ImportOptions } from "../options.ts";
import { partOptionsCarrier } from "../part-options-carrier.ts";
import { listMetadata } from "../content-list.ts";
import { validatePayload } from "../validate-payload.ts";
import { detailFromOptions, fromAiSdkFileData } from "./ai-sdk-media.ts";
import { aiSdkPromptSchema, type ParsedAiSdkMessage, type ParsedFileData } from "./ai-sdk-schema.ts";
import { AI_SDK_CONTENT_LIST_KEY, stringMetadata } from "./content-form.ts";
import { reasoningBlockOf } from "./reasoning-options.ts";
import { partOptionsMetadata, RESULT_OPTIONS_KEY, withoutImageDetail } from "./part-options.ts";
import { opaqueBlockOf } from "./opaque-parts.ts";
import { fromToolOutput, toolOutputLayout, toolOutputOptions } from "./tool-output.ts";
import { MESSAGE_PROVIDER_OPTIONS_KEY, type AiSdkOptions } from "./to-ai-sdk.ts";

type Parsed<Role extends ParsedAiSdkMessage["role"]> = Extract<ParsedAiSdkMessage, { role: Role }>;
type UserPart = Exclude<Parsed<"user">["content"], string>[number];
type AssistantPart = Exclude<Parsed<"assistant">["content"], string>[number];

function mediaBlock(
  data: ParsedFileData,
  mediaType: string | undefined,
  filename: string | undefined,
  image: boolean,
): ImageBlock | FileBlock {
  const source = fromAiSdkFileData(data);
  const type = mediaType ?? source.mediaType ?? (image ? "image/*" : "application/octet-stream");
  const location = source.data !== undefined ? { data: source.data } : { url: source.url ?? "" };
  if (image || type.startsWith("image")) return { type: "image", mediaType: type, ...location };
  return { type: "file", mediaType: type, ...location, ...(filename !== undefined && { filename }) };
}

function userBlock(part: UserPart): ContentBlock {
  if (part.type === "text") return { type: "text", text: part.text };
  const block =
    part.type === "image"
      ? mediaBlock(part.image, part.mediaType, undefined, true)
      : mediaBlock(part.data, part.mediaType, part.filename, false);
  // The image detail level the AI SDK's OpenAI provider reads.
  return block.type === "image" ? { ...block, ...detailFromOptions(part.providerOptions) } : block;
}

function assistantBlocks(part: AssistantPart, options: AiSdkOptions): ContentBlock[] {
  if (part.type === "reasoning")
    return [reasoningBlockOf(part.text, part.providerOptions, options.signatureProvider ?? "anthropic")];
  // Provider options of a text, tool call or file (a Gemini thought signature, an OpenAI item id) ride on a
  // carrier before it; the parts kept opaque hold their own.
  const carrier = part.providerOptions === undefined ? [] : [partOptionsCarrier(part.providerOptions)];
  switch (part.type) {
    case "text":
      return [...carrier, { type: "text", text: part.text }];
    case "tool-call":
      // A provider-executed call (with its result, below): kept whole, its options included.
      if (part.providerExecuted === true) return [opaqueBlockOf(part)];
      return [...carrier, { type: "tool-call", id: part.toolCallId, name: part.toolName, input: part.input }];
    case "file":
      return [...carrier, mediaBlock(part.data, part.mediaType, part.filename, false)];
    case "tool-result":
    case "custom":
    case "reasoning-file":
      return [opaqueBlockOf(part)];
  }
}

/** The draft metadata of `message`: its message-level `providerOptions`, and `form` (how its content came). */
function metadataOf(
  message: ParsedAiSdkMessage,
  form?: { [key: string]: JsonValue },
): Pick<MessageDraft, "metadata"> {
  const metadata = {
    ...(message.providerOptions !== undefined && {
      [MESSAGE_PROVIDER_OPTIONS_KEY]: message.providerOptions as { [key: string]: JsonValue },
    }),
    ...form,
  };
  return Object.keys(metadata).length > 0 ? { metadata } : {};
}

/**
 * Converts an AI SDK v7 prompt — `{ instructions?, messages }` as `toAiSdk` makes it, or a bare
 * `ModelMessage[]` (system messages allowed) — to ctxkit messages; `instructions` come first as system messages. Every part form the SDK accepts is read (tagged or
 * bare file data, the deprecated `image` part, deprecated tool-output content parts). Reasoning keeps its
 * signature (from `providerOptions.anthropic` or `.google`) and other provider options as `providerData`; the
 * `providerOptions` of assistant text, tool-call and file parts travel on a carrier block before them; an
 * image's `providerOptions.openai.imageDetail` (in user content or tool output content) becomes its `detail`;
 * the other `providerOptions` of user parts and of the parts of a tool output's `content` are kept in
 * `metadata["aiSdk.partOptions"]`, a tool result's own in `aiSdk.resultOptions` and its output's in
 * `aiSdk.outputOptions`; message-level `providerOptions` are kept in `metadata["aiSdk.providerOptions"]`, and
 * a user message's list of one text part (`aiSdk.contentList`) or an assistant's string content
 * (`aiSdk.contentString`) is recorded so `toAiSdk` sends it back in that form. A `tool` message becomes one
 * tool message per result. The assistant parts ctxkit does not model — a provider-executed tool call (a server
 * tool such as Anthropic's web search) and its `tool-result`, `custom` and `reasoning-file` parts — become opaque
 * blocks of the provider `ai-sdk` at their place, which only `toAiSdk` sends back. Tool approvals are rejected.
 *
 * @example
 * const messages = fromAiSdk(result.response.messages, { sessionId: conversation.sessionId, startSeq: 12 });
 */
export function fromAiSdk(payload: unknown, options: ImportOptions & AiSdkOptions = {}): Message[] {
  const prompt = validatePayload(
    aiSdkPromptSchema,
    Array.isArray(payload) ? { messages: payload } : payload,
    "prompt",
    "AI SDK prompt",
  );
  const instructions = prompt.instructions ?? prompt.system;
  const systems =
    instructions === undefined ? [] : Array.isArray(instructions) ? instructions : [instructions];
  const drafts: MessageDraft[] = [];
  for (const message of [
    ...systems.map((entry) =>
      typeof entry === "string" ? { role: "system" as const, content: entry } : entry,
    ),
    ...prompt.messages,
  ]) {
    switch (message.role) {
      case "system":
        drafts.push({
          role: "system",
          content: [{ type: "text", text: message.content }],
          ...metadataOf(message),
        });
        break;
      case "user": {
        const blocks =
          typeof message.content === "string"
            ? [{ type: "text" as const, text: message.content }]
            : message.content.map(userBlock);
        const form = {
          ...listMetadata(message.content, blocks, AI_SDK_CONTENT_LIST_KEY),
          ...(typeof message.content !== "string" &&
            partOptionsMetadata(message.content, (index, options) => {
              const block = blocks[index];
              return withoutImageDetail(options, block?.type === "image" && block.detail !== undefined);
            })),
        };
        drafts.push({ ...userDraft(blocks), ...metadataOf(message, form) });
        break;
      }
      case "assistant": {
        const content =
          typeof message.content === "string"
            ? message.content === ""
              ? []
              : [{ type: "text" as const, text: message.content }]
            : message.content.flatMap((part) => assistantBlocks(part, options));
        drafts.push({ role: "assistant", content, ...metadataOf(message, stringMetadata(message.content)) });
        break;
      }
      case "tool":
        for (const part of message.content) {
          const { metadata } = metadataOf(message, {
            ...toolOutputLayout(part.output),
            ...toolOutputOptions(part.output),
            ...(part.providerOptions !== undefined && {
              [RESULT_OPTIONS_KEY]: part.providerOptions as { [key: string]: JsonValue },
            }),
          });
          drafts.push({
            role: "tool",
            content: [
              {
                type: "tool-result",
                callId: part.toolCallId,
                toolName: part.toolName,
                ...fromToolOutput(part.output),
              },
            ],
            ...(metadata !== undefined && { metadata }),
          });
        }
        break;
    }
  }
  return buildMessages(drafts, options);
}
