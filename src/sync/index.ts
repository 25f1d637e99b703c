/**
 * `ctxkit/sync`: multi-agent context sync (a conversation agent and executors sharing one ledger, each executor
 * with a cursor), its WebSocket protocol, and the CLI-proxy channel (`toCliPrompt`, `CliModel`). Core-safe: the
 * WebSocket endpoint (it needs `ws`) is exported from `ctxkit/server` as `attachSyncEndpoint`. See docs/sync.md.
 */
export { type LedgerEntry, ledgerEntrySchema } from "./ledger-entry.ts";
export * from "./ledger-state.ts";
export * from "./tool-summary.ts";
export * from "./strip-binary-fields.ts";
export * from "./execution-context.ts";
export * from "./conversation-ledger.ts";
export * from "./sync-state-store.ts";
export * from "./json-file-sync-state-store.ts";
export * from "./session-store-sync-state.ts";
export {
  type AgentResultMessage,
  type ClientMessage,
  clientMessageSchema,
  type ConversationRequestMessage,
  conversationRequestSchema,
  type ConversationResponseMessage,
  type ConversationToolCall,
  conversationToolCallSchema,
  type NewSessionMessage,
  newSessionSchema,
  type ServerMessage,
  serverMessageSchema,
  type SessionContextMessage,
  sessionContextSchema,
  type SessionReadyMessage,
  SYNC_SUBPROTOCOL,
  type UserIntentMessage,
  userIntentSchema,
} from "./protocol.ts";
export * from "./executor.ts";
export * from "./language-model-responder.ts";
export * from "./sync-hub-options.ts";
export { SyncHub, type OpenSessionRequest } from "./sync-hub.ts";
export { LiveSession } from "./live-session.ts";
export * from "./sync-server-session.ts";
export * from "./client.ts";

export * from "./neutralize-system-prompt.ts";
export {
  CLI_JSON_FORMAT,
  type CliFunction,
  type CliPromptInput,
  type CliPromptOptions,
  toCliPrompt,
} from "./cli-prompt.ts";
export { type CliReply, type CliToolCall } from "./cli-reply.ts";
export { type CliOutput, type CliOutputFormat } from "./cli-output.ts";
export * from "./language-model-prompt.ts";
export { redactSecrets, type RedactOptions } from "../errors/redact-secrets.ts";
export { runCliCommand, type CliCommandSpec, type CliCommandOutput } from "./run-cli-command.ts";
export * from "./cli-model.ts";
export { CliModelError, type CliModelFailure, type CliModelErrorDetails } from "../errors/cli-model-error.ts";
