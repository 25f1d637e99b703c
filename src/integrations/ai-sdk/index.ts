export * from "./middleware.ts";
export * from "./prompt-bridge.ts";
