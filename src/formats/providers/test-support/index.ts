/** Test support for the provider converters (not part of the public API). */
export * from "./history-arbitrary.ts";
export * from "./sample-history.ts";
export * from "./stored-form.ts";
export * from "./ai-sdk-prompt-arbitrary.ts";
