// The reply of an OpenAI chat completion, rebuilt as ctxkit content: shared with the library's OpenAI helpers.
export {
  replyBlocks,
  replyFromCompletion,
  usageOf,
  type AssistantReply,
  type ToolCallDraft,
} from "../../formats/openai/openai-reply.ts";
