export type * from "./openai-responses-item.ts";
export { openAIResponsesInputSchema } from "./openai-responses-schema.ts";
export { toOpenAIResponses, type OpenAIResponsesExportOptions } from "./to-openai-responses.ts";
export { fromOpenAIResponses } from "./from-openai-responses.ts";
