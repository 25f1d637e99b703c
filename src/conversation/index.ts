/**
 * `ctxkit/conversation`: the in-memory history of one session — appends, snapshots, orphan repair and the
 * write queue.
 */
export {
  type AssistantInput,
  Conversation,
  type ConversationOptions,
  type ConversationWriter,
  type ToolResultInput,
} from "./conversation.ts";
export * from "./snapshot.ts";
export * from "./orphan-repair.ts";
export * from "./write-queue.ts";
