export * from "./replay.ts";
export * from "./prefix-cache.ts";
