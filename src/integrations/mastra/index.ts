export * from "./ctxkit-processor.ts";
