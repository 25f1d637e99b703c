import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MemorySessionStore } from "../store/memory/index.ts";
import { MemoryKeyStore } from "./auth/memory-key-store.ts";
import { CONTENT_SECURITY_POLICY } from "./http/security-headers.ts";
import { startServer, type RunningServer } from "./start-server.ts";

const running: RunningServer[] = [];
const folders: string[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.close()));
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

async function start(options: Parameters<typeof startServer>[0]) {
  const server = await startServer({ port: 0, ...options });
  running.push(server);
  return server;
}

/** A raw GET with a chosen Host header (fetch would not let us lie about it). */
function getWithHost(
  server: RunningServer,
  path: string,
  host: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { host: "127.0.0.1", port: server.port, path, headers: { host } },
      (response) => {
        let body = "";
        response.on("data", (chunk: Buffer) => (body += chunk.toString()));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
      },
    );
    outgoing.on("error", reject);
    outgoing.end();
  });
}

describe("startServer", () => {
  it("binds 127.0.0.1 by default and serves /health", async () => {
    const server = await start({
      store: new MemorySessionStore(),
      keys: new MemoryKeyStore(),
      webRoot: false,
    });
    expect(server.host).toBe("127.0.0.1");
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });

  it("refuses to run without authentication on a non-loopback address", async () => {
    await expect(
      startServer({ store: new MemorySessionStore(), auth: false, host: "0.0.0.0", port: 0 }),
    ).rejects.toThrow(/only be turned off on 127\.0\.0\.1/);
  });

  it("refuses auth without a key store", async () => {
    await expect(startServer({ store: new MemorySessionStore(), port: 0 })).rejects.toThrow(/no key store/);
  });

  it("without auth serves tenant local on loopback, and refuses other Host names (DNS rebinding)", async () => {
    const server = await start({ store: new MemorySessionStore(), auth: false, webRoot: false });
    const me = await fetch(`${server.url}/v1/me`);
    expect(await me.json()).toEqual({ tenant: "local", auth: false });
    expect((await getWithHost(server, "/v1/me", `localhost:${server.port}`)).status).toBe(200);
    const rebound = await getWithHost(server, "/v1/me", "attacker.example");
    expect(rebound.status).toBe(403);
    expect(rebound.body).toContain("forbidden_host");
  });
});

describe("the inspector's static files", () => {
  function webRoot() {
    const root = mkdtempSync(join(tmpdir(), "ctxkit-web-"));
    folders.push(root);
    mkdirSync(join(root, "dist", "assets"), { recursive: true });
    writeFileSync(join(root, "dist", "index.html"), "<!doctype html><title>inspector</title>");
    writeFileSync(join(root, "dist", "assets", "app.js"), "console.log('app');");
    writeFileSync(join(root, "secret.txt"), "outside the web root");
    return join(root, "dist");
  }

  it("serves files with a strict CSP, nosniff and no-referrer, and index.html for client routes", async () => {
    const server = await start({
      store: new MemorySessionStore(),
      keys: new MemoryKeyStore(),
      webRoot: webRoot(),
    });
    const index = await fetch(`${server.url}/`);
    expect(index.status).toBe(200);
    expect(index.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(index.headers.get("content-security-policy")).toBe(CONTENT_SECURITY_POLICY);
    expect(CONTENT_SECURITY_POLICY).toContain("default-src 'none'; script-src 'self'");
    expect(index.headers.get("x-content-type-options")).toBe("nosniff");
    expect(index.headers.get("referrer-policy")).toBe("no-referrer");
    const script = await fetch(`${server.url}/assets/app.js`);
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(await script.text()).toBe("console.log('app');");
    expect(await (await fetch(`${server.url}/sessions/ses_1`)).text()).toContain("<title>inspector</title>");
    // API paths never fall back to the page, and need a key.
    expect((await fetch(`${server.url}/v1/sessions`)).status).toBe(401);
  });

  it("never serves a file outside its root", async () => {
    const server = await start({
      store: new MemorySessionStore(),
      keys: new MemoryKeyStore(),
      webRoot: webRoot(),
    });
    for (const path of ["/../secret.txt", "/%2e%2e/secret.txt", "/assets/%2e%2e%2f%2e%2e%2fsecret.txt"]) {
      const answer = await getWithHost(server, path, `127.0.0.1:${server.port}`);
      expect(answer.body, path).not.toContain("outside the web root");
    }
  });
});
