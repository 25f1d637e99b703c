export * from "./ctxkit-jsonl-records.ts";
export { readCtxkitJsonl } from "./read-ctxkit-jsonl.ts";
export { exportCtxkitJsonl, formatCtxkitRecord, type ExportableConversation } from "./write-ctxkit-jsonl.ts";
export { orderedMessage } from "./serialize-message.ts";
