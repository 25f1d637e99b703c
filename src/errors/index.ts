export {
  CtxkitError,
  type CtxkitErrorCode,
  type CtxkitErrorOptions,
  type HttpErrorCode,
} from "./ctxkit-error.ts";
export * from "./errors.ts";
export * from "./file-access-error.ts";
export * from "./optional-peer.ts";
export * from "./provider-errors.ts";
export * from "./settings-file-error.ts";
export * from "./redact-secrets.ts";
export * from "./overflow-recognition.ts";
