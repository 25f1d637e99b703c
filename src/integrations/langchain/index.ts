export * from "./ctxkit-langchain-middleware.ts";
export * from "./ctxkit-chat-message-history.ts";
export { entryOf, replyOf, toLangChain } from "./langchain-messages.ts";
