export * from "./middleware.ts";
export * from "./prepare-step.ts";
export * from "./prompt-bridge.ts";
