export type * from "./gemini-content.ts";
export { geminiPayloadSchema } from "./gemini-schema.ts";
export { toGemini, type GeminiExportOptions } from "./to-gemini.ts";
export { fromGemini } from "./from-gemini.ts";
export { toolResultOf } from "./function-response.ts";
