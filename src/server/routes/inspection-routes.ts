import type { Hono } from "hono";
import { z } from "zod";
import type { PreparedRequest } from "../../engine/prepared-request.ts";
import { toOpenAIChatJson } from "../../formats/providers/openai-chat/index.ts";
import { cacheProfiles, type CacheProvider } from "../../pricing/cache-profile.ts";
import { replayConversation } from "../../replay/replay.ts";
import { sessionReplaySettings } from "./inspector-replay-settings.ts";
import { HttpError, notFound } from "../http/http-error.ts";
import { readJson } from "../http/json-body.ts";
import { clientSystemPrompt } from "../proxy/session-inputs.ts";
import type { ServerContext, ServerEnv } from "../server-context.ts";
import { publicMessages } from "../tenancy/tenant-session-id.ts";
import { withSettings } from "../../governance/pipeline.ts";
import { checkReplayCharacters, checkReplayMessages } from "./replay-size-limit.ts";
import { storedSessionJson } from "./session-json.ts";

const compactSchema = z.object({ focus: z.string().max(2_000).optional() });

/**
 * The inspection form of a prepared request: the governed messages, the same payload as OpenAI chat messages
 * (media kept in the blob store shown as placeholders), tokens per channel, the token budget and the events.
 * Session ids are the tenant's.
 *
 * @example
 * c.json(contextJson("acme", "ses_1", "prepared", prepared, new Date().toISOString()));
 */
export function contextJson(
  tenant: string,
  sessionId: string,
  source: string,
  prepared: PreparedRequest,
  preparedAt: string,
) {
  const system = prepared.system === "" ? [] : [{ role: "system", content: prepared.system }];
  return {
    sessionId,
    source,
    system: prepared.system,
    messages: publicMessages(tenant, prepared.messages),
    openai: [...system, ...toOpenAIChatJson(prepared.messages, { reasoning: "omit" })],
    channels: prepared.inspection.channels,
    tokens: prepared.tokens,
    events: prepared.events,
    checkpoint: prepared.checkpoint,
    preparedAt,
  };
}

/**
 * Inspection routes of a session: stats, the governed context, a replay of its stored history, and the
 * user's `/compact` and `/clear`.
 *
 * @example
 * registerInspectionRoutes(app, context);
 */
export function registerInspectionRoutes(app: Hono<ServerEnv>, context: ServerContext): void {
  const { store, directory, engines } = context;

  app.get("/v1/sessions/:id/stats", async (c) => {
    const tenant = c.get("tenant");
    const { id, storeId } = await directory.requireStored(tenant, c.req.param("id"));
    const { stored, ...stats } = await engines.withSession(tenant, storeId, (lease) => lease.session.stats());
    return c.json({
      stats: { ...stats, sessionId: id },
      ...(stored !== undefined && { session: storedSessionJson(stored, tenant) }),
    });
  });

  app.get("/v1/sessions/:id/context", async (c) => {
    const tenant = c.get("tenant");
    const { id, storeId } = await directory.requireStored(tenant, c.req.param("id"));
    const answer = await engines.withSession(tenant, storeId, async (lease) => {
      const last = lease.memo.lastRequest;
      if (last !== undefined) return contextJson(tenant, id, "last-request", last.prepared, last.at);
      // Looking changes nothing: the next real request sends what it would have sent without this view.
      const prepared = await lease.session.preview({
        ...clientSystemPrompt(lease.memo.system),
        media: "ref",
      });
      return contextJson(tenant, id, "prepared", prepared, context.clock().toISOString());
    });
    return c.json(answer);
  });

  app.get("/v1/sessions/:id/replay", async (c) => {
    const tenant = c.get("tenant");
    const { id, record, storeId } = await directory.requireStored(tenant, c.req.param("id"));
    const pricing = c.req.query("pricing");
    if (pricing !== undefined && !Object.hasOwn(cacheProfiles, pricing)) {
      throw new HttpError(
        400,
        "invalid_input",
        `pricing must be one of ${Object.keys(cacheProfiles).join(", ")}`,
      );
    }
    checkReplayMessages(id, record.messageCount, context.limits);
    const result = await context.replays.run(async () => {
      const rows = (await store.dumpSession(storeId)).rows;
      const messages = rows.map((row) => row.message).sort((a, b) => a.seq - b.seq);
      checkReplayCharacters(id, messages, context.limits);
      // The same settings as the inspector's timeline, so both agree with `ctxkit replay` on this session.
      const settings = await sessionReplaySettings(
        messages,
        (await engines.engine(tenant)).settings,
        context.upstream?.model,
      );
      const cache = pricing === undefined ? settings.cache : cacheProfiles[pricing as CacheProvider];
      return replayConversation(messages, {
        ...settings,
        pipeline: withSettings(settings.pipeline, { pricing: cache.provider }),
        cache,
      });
    });
    return c.json(result);
  });

  app.post("/v1/sessions/:id/compact", async (c) => {
    const tenant = c.get("tenant");
    const { storeId } = await directory.requireStored(tenant, c.req.param("id"));
    const { focus } = await readJson(c, compactSchema, "compaction");
    const events = await engines.withSession(tenant, storeId, async (lease) => {
      lease.memo.lastRequest = undefined;
      // Governance compacts the view it holds: prepare first so a session loaded after a restart has one.
      await lease.session.prepare({ ...clientSystemPrompt(lease.memo.system), media: "ref" });
      return lease.session.compact(focus === undefined ? {} : { focus });
    });
    return c.json({ events });
  });

  app.post("/v1/sessions/:id/clear", async (c) => {
    const tenant = c.get("tenant");
    const { storeId } = await directory.requireStored(tenant, c.req.param("id"));
    await engines.withSession(tenant, storeId, async (lease) => {
      lease.memo.lastRequest = undefined;
      await lease.session.clear();
    });
    const record = await store.getSession(storeId);
    if (record === undefined) throw notFound("session", c.req.param("id"));
    return c.json({ session: storedSessionJson(record, tenant) });
  });
}
