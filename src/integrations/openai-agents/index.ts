export * from "./ctxkit-session.ts";
export * from "./agent-items.ts";
