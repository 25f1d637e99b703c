export * from "./conversation.ts";
export * from "./snapshot.ts";
export * from "./orphan-repair.ts";
export * from "./write-queue.ts";
