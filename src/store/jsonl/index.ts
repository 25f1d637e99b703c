export {
  exportSessionsJsonl,
  writeSessionsJsonl,
  sessionJsonlLines,
  EXPORT_HEADER,
} from "./export-sessions-jsonl.ts";
export {
  importSessionsJsonl,
  parseSessionsJsonl,
  restoreDumps,
  summarizeDump,
  type ImportSessionsOptions,
  type ImportedSessionSummary,
  type ImportResult,
} from "./import-sessions-jsonl.ts";
export { conversationDump, type ConversationToStore } from "./conversation-dump.ts";
export { sessionLineSchema, blobLineSchema, type SessionLine, type BlobLine } from "./session-lines.ts";
export {
  importTranscriptSessions,
  type ImportTranscriptSessionsOptions,
} from "./import-transcript-sessions.ts";
