import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import { ConfigError } from "../errors/errors.ts";
import { createServer } from "./create-server.ts";
import { DEFAULT_LIMITS, LOCAL_TENANT, type ServerOptions } from "./server-options.ts";
import { mountTenantSync, type TenantHubOptions, type TenantSync } from "./sync/tenant-sync-endpoint.ts";

/** Options of `startServer`: the server's options plus where to listen. */
export interface StartServerOptions extends ServerOptions {
  /** Address to bind. Default `127.0.0.1`. */
  readonly host?: string;
  /** Port; 0 picks a free one. Default 7710. */
  readonly port?: number;
  /**
   * Serve the agent-sync WebSocket at `/v1/sync` (API-key auth like every route): the sync hub options of
   * each tenant (its executors and conversation agent), created on its first connection. The sync state lives in
   * `store`; none is ever deleted unless `syncRetentionDays` says so.
   */
  readonly sync?: (tenant: string) => TenantHubOptions;
  /**
   * With `sync`: delete the sync sessions (agent `ctxkit-sync`, every tenant's) idle for more than this many days,
   * at start (`RunningServer.sync.cleaned` tells how many). Default: never delete.
   */
  readonly syncRetentionDays?: number;
}

/** A listening server. */
export interface RunningServer {
  /** `http://host:port` (IPv6 hosts in brackets). */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly server: Server;
  /** The agent-sync endpoint, when `sync` was given. */
  readonly sync: TenantSync | undefined;
  /** Stops accepting connections, ends open ones, and resolves once closed. */
  close(): Promise<void>;
}

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

/**
 * True when `host` is a loopback address the server may bind without authentication.
 *
 * @example
 * isLoopbackAddress("127.0.0.1"); // true
 * isLoopbackAddress("0.0.0.0"); // false
 */
export function isLoopbackAddress(host: string): boolean {
  return LOOPBACK.has(host.toLowerCase());
}

/** A listen failure the user can act on, as a one-line ConfigError; anything else unchanged. */
function listenError(error: Error, host: string, port: number): Error {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "EADDRINUSE") {
    return new ConfigError(
      "server.port",
      `${host}:${port} is already in use; stop what listens there or pick another port with --port (0 picks a free one)`,
      { cause: error },
    );
  }
  if (code === "EACCES") {
    return new ConfigError(
      "server.port",
      `not allowed to listen on ${host}:${port}; ports below 1024 need privileges, pick another with --port`,
      { cause: error },
    );
  }
  if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND") {
    return new ConfigError(
      "server.host",
      `cannot listen on ${host}: no such address on this machine; use 127.0.0.1 (default) or 0.0.0.0`,
      { cause: error },
    );
  }
  return error;
}

/**
 * Starts the server on `host:port` (127.0.0.1:7710 by default). Refuses to run without authentication on
 * anything but a loopback address.
 *
 * @example
 * const running = await startServer({ store, keys, upstream: { baseURL: "https://api.openai.com/v1", apiKey } });
 * console.log(`listening on ${running.url}`);
 * await running.close();
 */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const host = options.host ?? "127.0.0.1";
  if (options.auth === false && !isLoopbackAddress(host)) {
    throw new ConfigError(
      "server.host",
      `authentication can only be turned off on 127.0.0.1, ::1 or localhost, not ${host}; create a key with: ctxkit serve keys add <tenant>`,
    );
  }
  const app = createServer(options);
  const requestTimeout = options.limits?.requestTimeoutMs ?? DEFAULT_LIMITS.requestTimeoutMs;
  const port = options.port ?? 7710;
  const server = await new Promise<Server>((resolve, reject) => {
    const created = serve(
      {
        fetch: app.fetch,
        hostname: host,
        port,
        serverOptions: { requestTimeout, headersTimeout: Math.min(requestTimeout, 30_000) },
      },
      () => resolve(created),
    ) as Server;
    // Idle keep-alive connections stay open longer than a load balancer's (60 s is common) and longer than a busy
    // client takes between requests: a server that closes first races the client's next request on that socket.
    created.keepAliveTimeout = 65_000;
    created.once("error", (error) => reject(listenError(error, host, port)));
  });
  const sync =
    options.sync === undefined
      ? undefined
      : mountTenantSync(server, {
          auth: options.auth ?? true,
          ...(options.keys !== undefined && { keys: options.keys }),
          localTenant: LOCAL_TENANT,
          hubFor: options.sync,
          sessions: options.store,
          retentionDays: options.syncRetentionDays ?? 0,
          maxPayload: options.limits?.maxBodyBytes ?? DEFAULT_LIMITS.maxBodyBytes,
        });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}`,
    host: address.address,
    port: address.port,
    server,
    sync,
    close: async () => {
      await sync?.close();
      await new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}
