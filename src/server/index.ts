/**
 * `ctxkit/server`: the HTTP API (Hono on Node) — sessions, turns over Server-Sent Events, context inspection,
 * memory, metrics, the OpenAI (chat completions, Responses) and Anthropic (Messages) proxies, with API keys bound
 * to tenants. See docs/server-api.md for the wire contract.
 */
export { createServer } from "./create-server.ts";
export {
  startServer,
  isLoopbackAddress,
  type StartServerOptions,
  type RunningServer,
} from "./start-server.ts";
export { DEFAULT_LIMITS, LOCAL_TENANT, type ServerOptions, type ServerLimits } from "./server-options.ts";
export type { ServerEnv } from "./server-context.ts";
export type { ServerEngineOptions } from "./tenancy/tenant-engines.ts";
export type { TurnLocks } from "./tenancy/turn-locks.ts";
export type { UpstreamOptions } from "./upstream/upstream-options.ts";
export type { RateLimit } from "./limits/rate-limiter.ts";
export type { LimitOverrides } from "./limits/limit-overrides.ts";
export type { TenantLimits } from "./limits/tenant-limits.ts";
export { type KeyStore, type ApiKeyRecord, type KeyIdentity, tenantSchema } from "./auth/key-store.ts";
export { KEY_PERMISSIONS, type KeyPermission } from "./auth/key-permissions.ts";
export { MemoryKeyStore } from "./auth/memory-key-store.ts";
export { JsonFileKeyStore } from "./auth/json-file-key-store.ts";
export { generateApiKey, hashApiKey, type GeneratedKey } from "./auth/api-key.ts";
export { CONTENT_SECURITY_POLICY } from "./http/security-headers.ts";
export { HttpError } from "./http/http-error.ts";
export * from "./api-schemas.ts";
export { type TenantHubOptions, type TenantSync } from "./sync/tenant-sync-endpoint.ts";
export {
  SYNC_SESSION_AGENT,
  TenantSyncStateStore,
  cleanupSyncSessions,
  syncSessionId,
} from "./sync/tenant-sync-state-store.ts";
export {
  attachSyncEndpoint,
  type SyncEndpoint,
  type SyncEndpointOptions,
  type SyncUpgradeSource,
} from "../sync/websocket-endpoint.ts";
