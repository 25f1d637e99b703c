export { toAiSdk, type AiSdkOptions, type AiSdkPrompt } from "./to-ai-sdk.ts";
export { fromAiSdk } from "./from-ai-sdk.ts";
export { aiSdkMessagesSchema, aiSdkPromptSchema } from "./ai-sdk-schema.ts";
export type { SignatureProvider } from "./reasoning-options.ts";
