export * from "./replay.ts";
export * from "./replay-meter.ts";
export * from "./breakpoint-placement.ts";
export * from "./metered-summarizer.ts";
