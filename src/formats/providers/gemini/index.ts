export type * from "./gemini-content.ts";
export { geminiPayloadSchema } from "./gemini-schema.ts";
export { toGemini, type GeminiExportOptions } from "./to-gemini.ts";
export { fromGemini } from "./from-gemini.ts";
export { functionResponseOf, toolResultOf } from "./function-response.ts";
export { GENERATED_CALL_ID_PREFIX, generatedCallId, isGeneratedCallId } from "./generated-call-id.ts";
