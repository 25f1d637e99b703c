export {
  fromOpenAIChatCompletion,
  fromOpenAIToolCalls,
  type OpenAIAssistantReply,
} from "./openai-tool-calls.ts";
export { fromOpenAITools, toOpenAITools, type OpenAIFunctionTool } from "./openai-tools.ts";
