/**
 * `ctxkit/test`: fakes for testing code built on ctxkit — a scripted OpenAI-compatible server, a fake
 * summarizer, a deterministic token counter and a history builder.
 */
export {
  contextLengthExceeded,
  type FakeCompletion,
  type FakeDisconnect,
  type FakeErrorResponse,
  type FakeOpenAIResponse,
  type FakeToolCall,
  type FakeUsage,
  invalidApiKey,
  rateLimited,
  serverError,
} from "./fake-openai-responses.ts";
export {
  type ChatCompletionRequestBody,
  type FakeOpenAIRequest,
  type FakeOpenAIServer,
  type FakeOpenAIServerOptions,
  startFakeOpenAIServer,
} from "./fake-openai-server.ts";
export { FakeSummarizer } from "./fake-summarizer.ts";
export { FakeTokenCounter } from "./fake-token-counter.ts";
export { HistoryBuilder, type ScriptedCall } from "./history-builder.ts";
