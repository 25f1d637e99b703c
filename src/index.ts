/**
 * ctxkit core: the message model, errors, conversation, token accounting, formats, governance, summarizers,
 * prompt assembly, the context engine and replay. Storage backends, the server and integrations live in subpath
 * exports (`ctxkit/sqlite`, `ctxkit/postgres`, `ctxkit/server`, `ctxkit/ai-sdk`, `ctxkit/test`).
 */
export * from "./errors/index.ts";
export * from "./model/index.ts";
export * from "./conversation/index.ts";
export * from "./tokens/index.ts";
export * from "./pricing/index.ts";
export * from "./formats/providers/index.ts";
export * from "./formats/openai/index.ts";
export * from "./formats/transcripts/index.ts";
export * from "./formats/ctxkit-jsonl/index.ts";
export * from "./governance/index.ts";
export * from "./summarize/index.ts";
export * from "./metrics/index.ts";
export * from "./assembly/index.ts";
export * from "./store/index.ts";
export * from "./memory/index.ts";
export * from "./engine/index.ts";
export * from "./replay/index.ts";
export * from "./sync/index.ts";
