/**
 * ctxkit core: the message model, errors, conversation, token accounting and formats.
 * Storage backends, the server and integrations live in subpath exports (`ctxkit/sqlite`, `ctxkit/server`, …).
 */
export * from "./errors/index.ts";
export * from "./model/index.ts";
export * from "./conversation/index.ts";
