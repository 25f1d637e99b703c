export * from "./middleware.ts";
export * from "./prepare-step.ts";
export * from "./session-middleware.ts";
export * from "./session-steps.ts";
export * from "./ui-chat-store.ts";
export { uiMessagesOf } from "./ui-messages.ts";
