export * from "./system-prompt.ts";
export { assemblePayload, type Payload } from "./payload.ts";
export * from "./inspect.ts";
export * from "./context-stats.ts";
