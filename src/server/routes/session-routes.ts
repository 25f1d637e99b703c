import type { Hono } from "hono";
import { z } from "zod";
import { limitParameter } from "../http/limit-parameter.ts";
import { HttpError, notFound } from "../http/http-error.ts";
import { readJson } from "../http/json-body.ts";
import type { ServerContext, ServerEnv } from "../server-context.ts";
import { API_SESSION_ID_RULE, isApiSessionId, publicSessionId } from "../tenancy/tenant-session-id.ts";
import { reservedSessionJson, sessionJson, storedSessionJson } from "./session-json.ts";

const sessionId = z.string().refine(isApiSessionId, `a session id is ${API_SESSION_ID_RULE}`);
const createSchema = z.object({ id: sessionId.optional(), title: z.string().max(200).optional() });
const renameSchema = z.object({ title: z.string().max(200) });
const forkSchema = z.object({
  atSeq: z.number().int().nonnegative().optional(),
  id: sessionId.optional(),
  title: z.string().max(200).optional(),
});
const conflict = (id: string) =>
  new HttpError(409, "conflict", `session id "${id}" is taken; choose another id or leave it out`);

/**
 * Session routes: list and search, create, get, rename, delete and fork. Every lookup goes through the
 * session directory, so another tenant's id answers exactly like an unknown one (404).
 *
 * @example
 * registerSessionRoutes(app, context);
 */
export function registerSessionRoutes(app: Hono<ServerEnv>, context: ServerContext): void {
  const { store, directory, engines, hub } = context;

  app.get("/v1/sessions", async (c) => {
    const tenant = c.get("tenant");
    const query = c.req.query("q");
    if (query !== undefined && query.trim() !== "") {
      const hits = await store.searchSessions(query, {
        ...directory.filter(tenant),
        limit: limitParameter(c.req.query("limit"), 20),
      });
      return c.json({
        sessions: hits.map((hit) => storedSessionJson(hit.session, tenant)),
        hits: hits.map((hit) => ({
          sessionId: publicSessionId(tenant, hit.session.id),
          ...(hit.seq !== undefined && { seq: hit.seq }),
          snippet: hit.snippet,
        })),
      });
    }
    const cursor = c.req.query("cursor");
    const page = await store.listSessions({
      ...directory.filter(tenant),
      limit: limitParameter(c.req.query("limit"), 50),
      ...(cursor !== undefined && { cursor }),
    });
    const reserved = cursor === undefined ? directory.reservations(tenant).map(reservedSessionJson) : [];
    return c.json({
      sessions: [...reserved, ...page.sessions.map((record) => storedSessionJson(record, tenant))],
      ...(page.nextCursor !== undefined && { nextCursor: page.nextCursor }),
    });
  });

  app.post("/v1/sessions", async (c) => {
    const body = await readJson(c, createSchema, "new session");
    const reservation = await directory.create(c.get("tenant"), body.id, body.title);
    return c.json({ session: reservedSessionJson(reservation) }, 201);
  });

  app.get("/v1/sessions/:id", async (c) => {
    const tenant = c.get("tenant");
    return c.json({ session: sessionJson(await directory.require(tenant, c.req.param("id")), tenant) });
  });

  app.patch("/v1/sessions/:id", async (c) => {
    const tenant = c.get("tenant");
    const { storeId } = await directory.requireStored(tenant, c.req.param("id"));
    const { title } = await readJson(c, renameSchema, "session update");
    return c.json({ session: storedSessionJson(await store.renameSession(storeId, title), tenant) });
  });

  app.delete("/v1/sessions/:id", async (c) => {
    const tenant = c.get("tenant");
    const owned = await directory.require(tenant, c.req.param("id"));
    await engines.withSession(tenant, owned.storeId, async () => {
      directory.settle(tenant, owned.storeId);
      // Checked again once the session's other requests are done: it may have gone meanwhile.
      if (owned.kind === "stored" && !(await directory.isStillStored(tenant, owned))) {
        throw notFound("session", owned.id);
      }
      if (owned.kind === "stored") await store.deleteSession(owned.storeId);
      await engines.forget(tenant, owned.storeId);
    });
    hub.publish(tenant, { type: "deleted", sessionId: owned.id });
    return c.body(null, 204);
  });

  app.post("/v1/sessions/:id/fork", async (c) => {
    const tenant = c.get("tenant");
    const source = await directory.requireStored(tenant, c.req.param("id"));
    const { storeId } = source;
    const body = await readJson(c, forkSchema, "fork");
    // The new id is held like a request's first turn, so no other request takes it while the fork is written;
    // a fork asked without one gets a fresh id in the tenant's own space, as a new session does.
    const target = await directory.claim(tenant, body.id ?? directory.newId());
    try {
      if (!target.created) throw conflict(target.id);
      const record = await engines.withSession(tenant, storeId, async () => {
        if (!(await directory.isStillStored(tenant, source))) throw notFound("session", source.id);
        const atSeq = body.atSeq ?? (await store.loadMessages(storeId)).at(-1)?.seq;
        if (atSeq === undefined)
          throw new HttpError(400, "invalid_input", "the session has no message to fork at");
        return store.forkSession(storeId, {
          atSeq,
          id: target.storeId,
          ...(body.title !== undefined && { title: body.title }),
        });
      });
      return c.json({ session: storedSessionJson(record, tenant) }, 201);
    } finally {
      target.release();
    }
  });
}
