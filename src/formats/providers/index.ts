/**
 * Lossless conversion between ctxkit messages and provider payloads: OpenAI Chat Completions, OpenAI
 * Responses, Anthropic Messages, Gemini and the Vercel AI SDK. See README.md in this folder for the conventions
 * each format needs (tool errors, JSON results, attachments, summaries, reasoning material).
 */
export * from "./openai-chat/index.ts";
export * from "./openai-responses/index.ts";
export * from "./anthropic/index.ts";
export * from "./gemini/index.ts";
export * from "./ai-sdk/index.ts";
export type { ExportOptions, ImportOptions } from "./options.ts";
export { SUMMARY_OPEN, SUMMARY_CLOSE, wrapSummary, unwrapSummary } from "./summary-envelope.ts";
export { TOOL_ERROR_PREFIX, encodeToolResultText, decodeToolResultText } from "./tool-result-text.ts";
export {
  PROVIDER_FILE_SCHEME,
  providerFileUrl,
  parseProviderFileUrl,
  parseDataUrl,
  toDataUrl,
} from "./media.ts";
export { type PartOptions } from "./part-options-carrier.ts";
