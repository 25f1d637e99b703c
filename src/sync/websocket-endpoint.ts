import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type RawData, type WebSocket } from "ws";
import { KEY_SUBPROTOCOL_PREFIX, SYNC_SUBPROTOCOL } from "./protocol.ts";
import type { SyncHubOptions } from "./sync-hub-options.ts";
import { SyncHub } from "./sync-hub.ts";
import { SyncServerSession } from "./sync-server-session.ts";

/**
 * Options of `attachSyncEndpoint`: the hub's (`store`, `executors`, `conversation`, `defaultAgent`, `routes`,
 * `restoreExecutorSession`, `discardExecutorSession`, `ledger`, `maxUndelivered`, `idleMs` — see
 * `SyncHubOptions`) and the transport's below.
 */
export interface SyncEndpointOptions extends SyncHubOptions {
  /** URL path of the endpoint, e.g. "/sync". Upgrades for other paths are left to other listeners. */
  readonly path: string;
  /** Largest accepted message in bytes (default 4 MiB); a bigger frame closes the connection (1009). */
  readonly maxPayload?: number;
  /**
   * Decides whether an upgrade request may connect (check a token, an origin); refused ones get 401, and 500
   * when it throws. Without it every upgrade on `path` is accepted: put authentication in front.
   */
  readonly authorize?: (request: IncomingMessage) => boolean | Promise<boolean>;
}

/**
 * What `attachSyncEndpoint` listens on: a Node `http.Server` (or `https.Server`), or any emitter of its
 * `"upgrade"` events (e.g. one per tenant, fed by a router that authenticated the request).
 */
export interface SyncUpgradeSource {
  on(event: "upgrade", listener: (request: IncomingMessage, socket: Duplex, head: Buffer) => void): unknown;
  off(event: "upgrade", listener: (request: IncomingMessage, socket: Duplex, head: Buffer) => void): unknown;
}

/** A mounted sync endpoint. */
export interface SyncEndpoint {
  readonly hub: SyncHub;
  /** Connections open now. */
  readonly connectionCount: number;
  /** Stops accepting connections, closes the open ones and aborts running requests. */
  close(): Promise<void>;
}

/**
 * The subprotocol to select: `ctxkit.sync` when offered, else the first one that carries no key, else the first
 * (a browser fails the handshake unless one of its offers is selected).
 */
function selectProtocol(offered: Set<string>): string | false {
  if (offered.has(SYNC_SUBPROTOCOL)) return SYNC_SUBPROTOCOL;
  const all = [...offered];
  return all.find((protocol) => !protocol.startsWith(KEY_SUBPROTOCOL_PREFIX)) ?? all[0] ?? false;
}

function frameText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  if (data instanceof ArrayBuffer) return Buffer.from(new Uint8Array(data)).toString("utf8");
  return data.toString("utf8");
}

function refuse(socket: Duplex, status: string): void {
  socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

/**
 * Serves the sync protocol over WebSocket on an existing Node HTTP server, at `options.path`. Each connection
 * gets a `SyncServerSession`; sessions are shared through one `SyncHub`, so a client that reconnects finds its
 * running requests and any results it missed.
 *
 * @example
 * ```ts
 * const server = http.createServer(app);
 * const endpoint = attachSyncEndpoint(server, {
 *   path: "/sync",
 *   store: new JsonFileSyncStateStore("./data/sync-state.json"),
 *   executors: { desktop },
 *   conversation: languageModelResponder({ model, tools }),
 * });
 * server.listen(8080);
 * ```
 */
export function attachSyncEndpoint(server: SyncUpgradeSource, options: SyncEndpointOptions): SyncEndpoint {
  const hub = new SyncHub(options);
  const sockets = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxPayload ?? 4 * 1024 * 1024,
    handleProtocols: selectProtocol,
  });

  const onConnection = (socket: WebSocket) => {
    const connection = new SyncServerSession(hub, (message) => {
      if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
    });
    socket.on("message", (data, isBinary) => {
      void connection.handle(isBinary ? "" : frameText(data));
    });
    socket.on("close", () => connection.close());
    socket.on("error", () => socket.terminate());
  };

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = new URL(request.url ?? "/", "http://localhost").pathname;
    if (path !== options.path) return;
    void (async () => {
      try {
        if (options.authorize && !(await options.authorize(request)))
          return refuse(socket, "401 Unauthorized");
      } catch {
        return refuse(socket, "500 Internal Server Error");
      }
      sockets.handleUpgrade(request, socket, head, onConnection);
    })();
  };

  server.on("upgrade", onUpgrade);
  return {
    hub,
    get connectionCount() {
      return sockets.clients.size;
    },
    async close() {
      server.off("upgrade", onUpgrade);
      for (const client of sockets.clients) client.terminate();
      await new Promise<void>((resolve) => sockets.close(() => resolve()));
      await hub.close();
    },
  };
}
