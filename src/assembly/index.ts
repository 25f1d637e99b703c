/**
 * `ctxkit/assembly`: prompt assembly — system prompt sections, the payload, and its tokens by channel.
 */
export * from "./system-prompt.ts";
export { assemblePayload, type Payload } from "./payload.ts";
export * from "./inspect.ts";
export * from "./context-stats.ts";
