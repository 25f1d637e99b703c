export * from "./message.ts";
export * from "./blocks.ts";
export * from "./turns.ts";
export * from "./tool-pairing.ts";
export * from "./ids.ts";
export * from "./schemas.ts";
