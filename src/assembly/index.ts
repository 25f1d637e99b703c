export * from "./system-prompt.ts";
export * from "./payload.ts";
export * from "./inspect.ts";
export * from "./context-stats.ts";
