export type * from "./openai-chat-message.ts";
export { openAIChatMessagesSchema } from "./openai-chat-schema.ts";
export { toOpenAIChat, toOpenAIChatJson, type OpenAIChatExportOptions } from "./to-openai-chat.ts";
export { fromOpenAIChat } from "./from-openai-chat.ts";
