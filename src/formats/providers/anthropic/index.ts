export type * from "./anthropic-message.ts";
export { BLOCK_EXTRAS_KEY } from "./anthropic-message.ts";
export { anthropicPayloadSchema } from "./anthropic-schema.ts";
export { toAnthropic } from "./to-anthropic.ts";
export { fromAnthropic } from "./from-anthropic.ts";
