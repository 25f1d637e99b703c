/**
 * Durable sessions: the `SessionStore` and `BlobStore` contracts, the in-memory store and the ctxkit
 * JSONL export/import. The SQLite and PostgreSQL backends are subpath exports (`ctxkit/sqlite`, `ctxkit/postgres`).
 */
export type * from "./session-store.ts";
export {
  type BlobInfo,
  type BlobRange,
  blobRef,
  type BlobStore,
  isBlobRef,
  sessionOffloadStore,
  type SessionOffloadStore,
} from "./blob-store.ts";
export { EMPTY_USAGE_TOTALS, addUsage, usageDelta, type UsageDelta } from "./usage-totals.ts";
export {
  DEFAULT_INLINE_MEDIA_LIMIT,
  externalizeMedia,
  inlineMedia,
  textBlob,
  bytesBlob,
} from "./media-blobs.ts";
export { DEFAULT_MAX_TURNS, recentTurnCount } from "./recent-view.ts";
export { MAX_TITLE_LENGTH, normalizeTitle, titleFromMessages } from "./session-title.ts";
export { MemorySessionStore, MemoryBlobStore } from "./memory/index.ts";
export {
  type BlobLine,
  conversationDump,
  type ConversationToStore,
  exportSessionsJsonl,
  type ImportedSessionSummary,
  type ImportResult,
  importSessionsJsonl,
  type ImportSessionsOptions,
  importTranscriptSessions,
  type ImportTranscriptSessionsOptions,
  parseSessionsJsonl,
  restoreDumps,
  type SessionLine,
  summarizeDump,
  writeSessionsJsonl,
} from "./jsonl/index.ts";
