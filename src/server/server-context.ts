import type { MemoryStore } from "../memory/memory-store.ts";
import type { Clock } from "../model/ids.ts";
import type { SessionStore } from "../store/session-store.ts";
import type { KeyPermission } from "./auth/key-permissions.ts";
import type { LimitOverrides } from "./limits/limit-overrides.ts";
import type { RequestLimits } from "./limits/request-limits.ts";
import type { ServerMetrics } from "./metrics/server-metrics.ts";
import type { StatelessGovernance } from "./proxy/stateless-governance.ts";
import type { ServerLimits } from "./server-options.ts";
import type { EventHub } from "./tenancy/event-hub.ts";
import type { SessionDirectory } from "./tenancy/session-directory.ts";
import type { TenantEngines } from "./tenancy/tenant-engines.ts";
import type { UpstreamOptions } from "./upstream/upstream-options.ts";
import type { ReplayGate } from "./routes/replay-gate.ts";

/** What every route handler shares. */
export interface ServerContext {
  readonly store: SessionStore;
  readonly memory: MemoryStore | undefined;
  readonly directory: SessionDirectory;
  readonly engines: TenantEngines;
  readonly hub: EventHub;
  /** Governor states of stateless clients' conversations, by history fingerprint. */
  readonly stateless: StatelessGovernance;
  readonly metrics: ServerMetrics;
  readonly upstream: UpstreamOptions | undefined;
  /** Why there is no upstream (`ServerOptions.upstreamUnavailable`). */
  readonly upstreamUnavailable: string | undefined;
  /** The Anthropic Messages upstream (`ServerOptions.anthropicUpstream`). */
  readonly anthropicUpstream: UpstreamOptions | undefined;
  /**
   * The limits no key or tenant changes. The others (rate, body size, upstream timeout) are the request's own:
   * `c.get("limits")`, its key's and tenant's over the server's.
   */
  readonly limits: Pick<
    ServerLimits,
    "requestTimeoutMs" | "maxLiveSessions" | "maxReplayMessages" | "maxReplayCharacters"
  >;
  /** Bounds the session replays (inspector timelines, `/replay`) built at once. */
  readonly replays: ReplayGate;
  readonly auth: boolean;
  readonly log: (line: string) => void;
  readonly clock: Clock;
}

/** The Hono environment of the server: per-request variables set by the middleware. */
export interface ServerEnv {
  Variables: {
    /** The tenant the request's key belongs to (`local` without auth). */
    tenant: string;
    /** The id of the request's key; undefined without auth. */
    keyId: string | undefined;
    /** The limits the request's key sets for itself; undefined without auth or when it sets none. */
    keyLimits: LimitOverrides | undefined;
    /** What the request's key may do beyond its tenant's API; every permission without auth. */
    keyPermissions: readonly KeyPermission[];
    /** Whether the request's key is still valid (not revoked since): for streams that outlive the check. */
    keyIsValid: () => Promise<boolean>;
    /** The limits the request runs under (key over tenant over server), set on `/v1/*` once the key is known. */
    limits: RequestLimits;
    requestId: string;
  };
}
