/**
 * ctxkit: the common path of an agent that keeps its context governed — the context engine and its sessions, the
 * message model, the errors, the governance presets, the summarizers, token counters for a model and the in-memory
 * stores. Everything else is a subpath export, one idea each: `ctxkit/formats` (provider payloads and transcripts),
 * `ctxkit/tokens`, `ctxkit/pricing`, `ctxkit/governance` (processors, the governor, pipelines), `ctxkit/store`,
 * `ctxkit/memory`, `ctxkit/assembly`, `ctxkit/replay`, `ctxkit/model` (schemas and block helpers), `ctxkit/sync`,
 * and the backends and integrations (`ctxkit/sqlite`, `ctxkit/postgres`, `ctxkit/server`, `ctxkit/ai-sdk`, …).
 */
export * from "./engine/index.ts";
export {
  CtxkitError,
  type CtxkitErrorCode,
  type CtxkitErrorOptions,
  type HttpErrorCode,
  ConcurrentWriteError,
  ConfigError,
  ContextOverflowError,
  CorruptStoreError,
  DamagedMessageError,
  FileAccessError,
  InterruptedError,
  LoopDetectedError,
  MissingBlobError,
  MissingDependencyError,
  NotFoundError,
  type OverflowFigures,
  ParseError,
  PartialLastLineError,
  ProviderError,
  type ProviderErrorKind,
  SchemaTooNewError,
  SessionExistsError,
  SettingsFileError,
  StoreError,
  SummarizerError,
  UnknownFormatError,
  UnsupportedError,
  CompactedMessageError,
  ValidationError,
  isContextOverflowError,
} from "./errors/index.ts";
export {
  type Clock,
  type ContentBlock,
  type FileBlock,
  type IdGenerator,
  type ImageBlock,
  type ImageDetail,
  type JsonValue,
  type Message,
  type MessageInput,
  type MessageKind,
  type OpaqueBlock,
  type ReasoningBlock,
  type Role,
  type SummaryRange,
  type TextBlock,
  type ToolCallBlock,
  type ToolResultBlock,
  type Usage,
  messageText,
  text,
  toolCallsOf,
  toolResultsOf,
  toolResultText,
} from "./model/index.ts";
export {
  type AssistantInput,
  Conversation,
  type ConversationOptions,
  type ToolResultInput,
} from "./conversation/index.ts";
export {
  type GovernanceEvent,
  type GovernanceEventType,
  type GovernancePipeline,
  type GovernorSettings,
  type GovernorSettingsInput,
  type PresetName,
  type PresetOptionsInput,
  createPipeline,
  preset,
  presetNames,
  RECALL_TOOL_NAME,
} from "./governance/index.ts";
export {
  type Summarizer,
  type SummarizeRequest,
  createExtractiveSummarizer,
  type ExtractiveSummarizerOptions,
  createLlmSummarizer,
  type LlmSummarizerOptions,
} from "./summarize/index.ts";
export {
  type TokenCounter,
  counterForModel,
  estimatorForModel,
  defaultModelRegistry,
  type ModelInfo,
} from "./tokens/index.ts";
export {
  type SessionStore,
  type SessionRecord,
  type UsageTotals,
  type BlobStore,
  MemorySessionStore,
  MemoryBlobStore,
} from "./store/index.ts";
export { type MemoryStore, InMemoryMemoryStore } from "./memory/index.ts";
export {
  fromOpenAIChatCompletion,
  fromOpenAIToolCalls,
  toOpenAITools,
  type OpenAIAssistantReply,
  type OpenAIFunctionTool,
} from "./formats/openai/index.ts";
