import type { MemoryStore } from "../memory/memory-store.ts";
import type { Clock } from "../model/ids.ts";
import type { SessionStore } from "../store/session-store.ts";
import type { KeyStore } from "./auth/key-store.ts";
import type { RateLimit } from "./limits/rate-limiter.ts";
import type { TenantLimits } from "./limits/tenant-limits.ts";
import type { ServerEngineOptions } from "./tenancy/tenant-engines.ts";
import type { TurnLocks } from "./tenancy/turn-locks.ts";
import type { UpstreamOptions } from "./upstream/upstream-options.ts";

/** Request limits of the server. */
export interface ServerLimits {
  /** Largest request body, in bytes (413 beyond). Default 4 MiB. */
  readonly maxBodyBytes: number;
  /**
   * Per-key token bucket, or `false` for none. Default 1,000/s, bursts of 2,000, and a request over the rate waits
   * up to 5 s for its turn before a 429: above what one server turns over on a small machine, so a fleet of agent
   * sessions on one key never waits on it, while one key stays bounded. A key whose record sets its own
   * `rateLimit` follows that one instead.
   */
  readonly rateLimit: RateLimit | false;
  /** Upstream silence allowed before the headers and between chunks (504 beyond). Default 120 s. */
  readonly upstreamTimeoutMs: number;
  /** Time allowed to receive a whole request (Node's `requestTimeout`). Default 60 s. */
  readonly requestTimeoutMs: number;
  /** Sessions kept loaded in memory. Default 1,000. */
  readonly maxLiveSessions: number;
  /**
   * Largest stored session the inspector's timeline and `/v1/sessions/:id/replay` replay, in stored messages
   * (422 `session_too_large` beyond; `ctxkit replay` replays any size offline). Default 4,000.
   */
  readonly maxReplayMessages: number;
  /** The same in characters of stored message text (tool outputs included). Default 16,000,000. */
  readonly maxReplayCharacters: number;
}

/** The default limits. */
export const DEFAULT_LIMITS: ServerLimits = {
  maxBodyBytes: 4 * 1024 * 1024,
  rateLimit: { requestsPerSecond: 1_000, burst: 2_000, maxWaitMs: 5_000 },
  upstreamTimeoutMs: 120_000,
  requestTimeoutMs: 60_000,
  maxLiveSessions: 1_000,
  maxReplayMessages: 4_000,
  maxReplayCharacters: 16_000_000,
};

/** Options of `createServer`. */
export interface ServerOptions {
  readonly store: SessionStore;
  /** Long-term memory for `/v1/memory` (its owner is the tenant). Without it those routes answer 503. */
  readonly memory?: MemoryStore;
  /**
   * Put each tenant's core memories in its sessions' system prompts and store governance's summaries as memories
   * (default false). Every session of a tenant then shares its memories: leave it off when a tenant's sessions
   * belong to different end users.
   */
  readonly memoryInContext?: boolean;
  /** Engine options for every tenant, or chosen per tenant. */
  readonly engine?: ServerEngineOptions | ((tenant: string) => ServerEngineOptions);
  /** The OpenAI-compatible model server. Without it the proxy and turns routes answer 503. */
  readonly upstream?: UpstreamOptions;
  /**
   * Why there is no upstream, for the proxy and turns routes' 503 (e.g. "no API key for anthropic; set
   * ANTHROPIC_API_KEY …"), so a server can start to browse sessions while its model is not configured.
   */
  readonly upstreamUnavailable?: string;
  /**
   * The Anthropic Messages API `POST /v1/messages` forwards to (e.g. `{ baseURL: "https://api.anthropic.com/v1",
   * apiKey, auth: "x-api-key" }`); without it that route answers 503.
   */
  readonly anthropicUpstream?: UpstreamOptions;
  /** API keys. Required unless `auth` is false. */
  readonly keys?: KeyStore;
  /** Require an API key (default true). With `false` every request is tenant `local`. */
  readonly auth?: boolean;
  /**
   * The tenant that owns the sessions stored without an owner: those made outside the server, by `ctxkit demo`,
   * `import` and `chat` or by code that gives no `owner`. `ctxkit serve` sets `"local"` (the tenant of every
   * request when `auth` is false). Without it they belong to no tenant and no request sees them.
   */
  readonly unownedSessionsTenant?: string;
  readonly limits?: Partial<ServerLimits>;
  /**
   * Limits by tenant (validated): a `rateLimit` is one bucket shared by all the tenant's keys, on top of each key's
   * own; `maxBodyBytes` and `upstreamTimeoutMs` apply to its keys that set none of their own. A key's limits
   * (`ApiKeyRecord.limits`) win over its tenant's, and those over `limits`; no body limit goes above
   * `limits.maxBodyBytes`.
   */
  readonly tenantLimits?: TenantLimits;
  /** Receives one line per request (method, route pattern, status, duration) and server notices. Never secrets. */
  readonly log?: (line: string) => void;
  /** Folder of the web inspector's built files, served at `/`. Default `web/dist` of the package when present. */
  readonly webRoot?: string | false;
  /**
   * Serve `/metrics` without a key (for a scraper on a private network). Default false: `/metrics` counts every
   * tenant's traffic, so only a key with the `metrics` permission (`ApiKeyRecord.permissions`) may read it; other
   * keys get 403 `forbidden`.
   */
  readonly publicMetrics?: boolean;
  /**
   * Locks serialising each session's turns across the servers sharing the store's database
   * (`new PostgresTurnLocks(url)` from `ctxkit/postgres`; `ctxkit serve --pg` makes them). Without them, servers
   * behind a balancer still act on each session as stored, but two turns of one session racing on two servers
   * both reach the model and the later one is refused (409) after its call.
   */
  readonly turnLocks?: TurnLocks;
  readonly clock?: Clock;
}

/** The tenant of every request when auth is off. */
export const LOCAL_TENANT = "local";
