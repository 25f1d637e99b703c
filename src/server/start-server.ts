import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import { ConfigError } from "../errors/errors.ts";
import { createServer } from "./create-server.ts";
import { DEFAULT_LIMITS, type ServerOptions } from "./server-options.ts";

/** Options of `startServer`: the server's options plus where to listen. */
export interface StartServerOptions extends ServerOptions {
  /** Address to bind. Default `127.0.0.1`. */
  readonly host?: string;
  /** Port; 0 picks a free one. Default 7710. */
  readonly port?: number;
}

/** A listening server. */
export interface RunningServer {
  /** `http://host:port` (IPv6 hosts in brackets). */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly server: Server;
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
      `authentication can only be turned off on 127.0.0.1, ::1 or localhost, not ${host}; create a key with --create-key instead`,
    );
  }
  const app = createServer(options);
  const requestTimeout = options.limits?.requestTimeoutMs ?? DEFAULT_LIMITS.requestTimeoutMs;
  const server = await new Promise<Server>((resolve, reject) => {
    const created = serve(
      {
        fetch: app.fetch,
        hostname: host,
        port: options.port ?? 7710,
        serverOptions: { requestTimeout, headersTimeout: Math.min(requestTimeout, 30_000) },
      },
      () => resolve(created),
    ) as Server;
    created.once("error", reject);
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}`,
    host: address.address,
    port: address.port,
    server,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
