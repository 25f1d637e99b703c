import { createServer, type IncomingMessage, type Server } from "node:http";
import type { Duplex } from "node:stream";
import type { SessionStore } from "../../store/session-store.ts";
import type { SyncHubOptions } from "../../sync/sync-hub-options.ts";
import type { SyncStateStore } from "../../sync/sync-state-store.ts";
import { attachSyncEndpoint, type SyncEndpoint } from "../../sync/websocket-endpoint.ts";
import { presentedKey } from "../auth/authenticate.ts";
import type { KeyStore } from "../auth/key-store.ts";
import { isLoopbackHost } from "../http/loopback-host-guard.ts";
import { cleanupSyncSessions, TenantSyncStateStore } from "./tenant-sync-state-store.ts";
import { KEY_RECHECK_MS } from "../http/guard-streams.ts";

/** The URL path of the agent-sync WebSocket. */
export const SYNC_PATH = "/v1/sync";

/** Prefix of the `Sec-WebSocket-Protocol` value that carries a key (browsers cannot set `Authorization`). */
export const KEY_PROTOCOL_PREFIX = "ctxkit.key.";

/** A tenant's sync hub settings; its state is kept in the server's session store unless `store` says otherwise. */
export type TenantHubOptions = Omit<SyncHubOptions, "store"> & { readonly store?: SyncStateStore };

/** Options of `mountTenantSync`. */
export interface TenantSyncOptions {
  /** Verifies keys; required when `auth` is true. */
  readonly keys?: KeyStore;
  /** Require an API key (default true). Without, every connection is `localTenant`. */
  readonly auth: boolean;
  readonly localTenant: string;
  /** The hub of one tenant: its executors and conversation agent. */
  readonly hubFor: (tenant: string) => TenantHubOptions;
  /**
   * The server's session store: each tenant's sync sessions, ledgers, cursors and executor session ids live there
   * (`TenantSyncStateStore`); with `retentionDays`, sync sessions idle for longer are deleted when the endpoint is
   * mounted.
   */
  readonly sessions: SessionStore;
  /** Days after its last exchange that a sync session is deleted, on mount (default 0: none is deleted). */
  readonly retentionDays?: number;
  /** Largest accepted message in bytes. */
  readonly maxPayload?: number;
}

/** The mounted endpoint: one sync hub per tenant, created on its first connection. */
export interface TenantSync {
  /** Tenants with a hub now. */
  readonly tenants: readonly string[];
  /**
   * The start-up cleanup of sync sessions older than `retentionDays`: how many it deleted (0 without one). Connections wait for
   * it; if it fails, they are refused with 500 and this rejects with the store's error.
   */
  readonly cleaned: Promise<number>;
  close(): Promise<void>;
}

function refuse(socket: Duplex, status: string, code: string, message: string): void {
  const body = JSON.stringify({ error: { code, message } });
  socket.end(
    `HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Type: application/json\r\n` +
      `${status.startsWith("401") ? 'WWW-Authenticate: Bearer realm="ctxkit"\r\n' : ""}` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** The key of an upgrade request: `Authorization`/`X-Api-Key`, or a `ctxkit.key.<key>` subprotocol. */
function upgradeKey(request: IncomingMessage): string | undefined {
  const fromHeaders = presentedKey((name) => {
    const value = request.headers[name];
    return Array.isArray(value) ? value[0] : value;
  });
  if (fromHeaders !== undefined) return fromHeaders;
  const protocols = request.headers["sec-websocket-protocol"]?.split(",").map((part) => part.trim()) ?? [];
  const carried = protocols.find((protocol) => protocol.startsWith(KEY_PROTOCOL_PREFIX));
  return carried?.slice(KEY_PROTOCOL_PREFIX.length) || undefined;
}

/** True when a browser's `Origin` is this server itself (or when no browser is involved). */
function sameOrigin(request: IncomingMessage): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}

/**
 * Serves the agent-sync WebSocket (`attachSyncEndpoint` of `src/sync`) at `/v1/sync` with the server's API
 * keys: each tenant gets its own sync hub, so one tenant's sync sessions are invisible to another's even when
 * they pick the same session id. Their state is kept in the server's session store; sync sessions idle for
 * `retentionDays` are deleted on mount when it is given (never by default). Refuses a missing or invalid key with 401 before the upgrade. Without auth,
 * it refuses non-loopback `Host` headers and cross-origin browser pages (a page elsewhere could otherwise
 * open a socket to 127.0.0.1). Other upgrade paths get 404.
 *
 * @example
 * const sync = mountTenantSync(server, { keys, auth: true, localTenant: "local", sessions, hubFor: () => ({ executors }) });
 * await sync.close();
 */
export function mountTenantSync(server: Server, options: TenantSyncOptions): TenantSync {
  if (options.auth && options.keys === undefined) throw new TypeError("mountTenantSync: auth needs keys");
  const hubs = new Map<string, { emitter: Server; endpoint: SyncEndpoint }>();
  const cleaned = cleanupSyncSessions(options.sessions, options.retentionDays ?? 0, new Date());
  // Connections wait for the cleanup and report its failure; the rejection is the caller's to read too.
  const ready = cleaned.then(
    () => true,
    () => false,
  );

  const hubOf = (tenant: string) => {
    let hub = hubs.get(tenant);
    if (hub === undefined) {
      // attachSyncEndpoint only listens for "upgrade": a private, never listening server per tenant feeds
      // each tenant's hub the upgrades this router authenticated.
      const emitter = createServer();
      const settings = options.hubFor(tenant);
      const endpoint = attachSyncEndpoint(emitter, {
        ...settings,
        store: settings.store ?? new TenantSyncStateStore(options.sessions, tenant),
        path: SYNC_PATH,
        ...(options.maxPayload !== undefined && { maxPayload: options.maxPayload }),
      });
      hub = { emitter, endpoint };
      hubs.set(tenant, hub);
    }
    return hub;
  };

  const identify = async (request: IncomingMessage): Promise<string | undefined> => {
    if (!options.auth) return options.localTenant;
    const key = upgradeKey(request);
    return key === undefined ? undefined : (await options.keys!.verify(key))?.tenant;
  };

  // A socket outlives the key check of its upgrade: one whose key is revoked since is cut.
  const watchKey = (request: IncomingMessage, socket: Duplex) => {
    const key = upgradeKey(request);
    if (!options.auth || key === undefined) return;
    const timer = setInterval(() => {
      options.keys!.verify(key).then(
        (identity) => {
          if (identity === undefined) socket.destroy();
        },
        () => undefined,
      );
    }, KEY_RECHECK_MS);
    timer.unref();
    socket.once("close", () => clearInterval(timer));
  };

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = new URL(request.url ?? "/", "http://localhost").pathname;
    if (path !== SYNC_PATH) {
      refuse(socket, "404 Not Found", "not_found", `no WebSocket endpoint at ${path}; use ${SYNC_PATH}`);
      return;
    }
    if (!options.auth && (!isLoopbackHost(request.headers.host) || !sameOrigin(request))) {
      refuse(
        socket,
        "403 Forbidden",
        "forbidden_host",
        "this server runs without authentication and only accepts sockets from 127.0.0.1 itself",
      );
      return;
    }
    void Promise.all([identify(request), ready]).then(
      ([tenant, storeReady]) => {
        if (!storeReady) {
          refuse(
            socket,
            "500 Internal Server Error",
            "internal",
            "the session store failed; see the server log",
          );
          return;
        }
        if (tenant === undefined) {
          refuse(
            socket,
            "401 Unauthorized",
            "unauthorized",
            "send an API key as Authorization: Bearer <key> or the subprotocol ctxkit.key.<key>",
          );
          return;
        }
        watchKey(request, socket);
        hubOf(tenant).emitter.emit("upgrade", request, socket, head);
      },
      () => refuse(socket, "500 Internal Server Error", "internal", "the key store failed"),
    );
  };

  server.on("upgrade", onUpgrade);
  return {
    get tenants() {
      return [...hubs.keys()];
    },
    cleaned,
    async close() {
      server.off("upgrade", onUpgrade);
      await Promise.all([...hubs.values()].map((hub) => hub.endpoint.close()));
      hubs.clear();
    },
  };
}
