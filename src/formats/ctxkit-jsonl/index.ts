export {
  CTXKIT_JSONL_RECORD_TYPES,
  CTXKIT_JSONL_VERSION,
  type CtxkitConversationRecord,
  type CtxkitHeaderRecord,
  type CtxkitJsonlLine,
  type CtxkitMessageRecord,
  type CtxkitPassThroughRecord,
  type CtxkitRecord,
} from "./ctxkit-jsonl-records.ts";
export { readCtxkitJsonl } from "./read-ctxkit-jsonl.ts";
export { exportCtxkitJsonl, type ExportableConversation } from "./write-ctxkit-jsonl.ts";
