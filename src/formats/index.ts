/**
 * `ctxkit/formats`: lossless conversion between ctxkit messages and provider payloads (OpenAI Chat Completions and
 * Responses, Anthropic Messages, Gemini, the Vercel AI SDK), transcript importers (Claude Code, Codex, Gemini CLI,
 * SWE-agent, OpenAI chat logs) and the ctxkit JSONL format.
 */
export * from "./providers/index.ts";
export * from "./transcripts/index.ts";
export * from "./ctxkit-jsonl/index.ts";
export * from "./openai/index.ts";
