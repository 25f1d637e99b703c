import { CtxkitError, type CtxkitErrorCode, type CtxkitErrorOptions } from "./ctxkit-error.ts";
import { redactSecrets } from "./redact-secrets.ts";

/** Which kind of provider failure this is, for retry and recovery decisions. */
export type ProviderErrorKind = "overflow" | "rate_limit" | "auth" | "timeout" | "network" | "other";

const codeOfKind: Record<ProviderErrorKind, CtxkitErrorCode> = {
  overflow: "context_overflow",
  rate_limit: "rate_limited",
  auth: "auth_error",
  timeout: "timeout",
  network: "network_error",
  other: "provider_error",
};

/**
 * A model provider's failure, classified. `retryAfterMs` is set for rate limits that said when to retry. The
 * message never holds a key: providers quote the key they rejected, so it is redacted here (`redactSecrets`).
 */
export class ProviderError extends CtxkitError {
  readonly kind: ProviderErrorKind;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  constructor(
    kind: ProviderErrorKind,
    message: string,
    details: { status?: number; retryAfterMs?: number } & CtxkitErrorOptions = {},
  ) {
    super(codeOfKind[kind], redactSecrets(message), details);
    this.kind = kind;
    this.status = details.status;
    this.retryAfterMs = details.retryAfterMs;
  }
}
