export * from "./context-engine.ts";
export * from "./engine-session.ts";
export * from "./engine-memory.ts";
export * from "./engine-tool.ts";
export * from "./prepared-request.ts";
export * from "./agent-run.ts";
