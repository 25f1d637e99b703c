import type { Hono } from "hono";
import { toOpenAIChatJson } from "../../formats/providers/openai-chat/index.ts";
import { readGovernanceRecord } from "../../engine/governance-record.ts";
import { messageText } from "../../model/blocks.ts";
import { HttpError, notFound } from "../http/http-error.ts";
import type { ServerContext, ServerEnv } from "../server-context.ts";
import { publicMessages } from "../tenancy/tenant-session-id.ts";
import type { CacheProfile } from "../../pricing/cache-profile.ts";
import { sessionReplaySettings, type SessionReplaySettings } from "./inspector-replay-settings.ts";
import { buildTimeline, type Timeline } from "./inspector-timeline.ts";
import { TimelineCache } from "./timeline-cache.ts";
import { checkReplayCharacters, checkReplayMessages } from "./replay-size-limit.ts";

/** A session's timeline and the model it was replayed as. */
type SessionTimeline = Timeline & Pick<SessionReplaySettings, "model" | "settingsFrom">;

function requestIndex(value: string, timeline: Timeline): number {
  const index = /^\d{1,9}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(index) || index >= timeline.requests.length) {
    throw new HttpError(
      404,
      "not_found",
      `request "${value}" not found; the session has ${timeline.requests.length} requests (0-based)`,
    );
  }
  return index;
}

/** The cache model a timeline was priced with, as `ctxkit replay --json` reports it. */
function cacheModelJson(cache: CacheProfile) {
  return {
    provider: cache.provider,
    ...(cache.model !== undefined && { model: cache.model }),
    read: cache.read,
    write: cache.write,
    output: cache.output,
    ttlSeconds: cache.ttlMs / 1000,
    minTokens: Number.isFinite(cache.minTokens) ? cache.minTokens : null,
  };
}

/**
 * Routes the web inspector reads a session's history through: the per-request timeline (governed and raw
 * tokens by channel, the cache model's bill, next-step grounding with the spans each view lacked, governance
 * events) and its totals, the replayed governed payload of any request, and the outputs governance offloaded in
 * it. These are a replay of the stored history now, not a recording of the requests sent.
 * The stored history is replayed as `ctxkit replay` replays it (`sessionReplaySettings`: the recorded model's
 * window, tokenizer and cache) with the extractive summarizer (viewing never calls a model); nothing is written.
 * The replay gives the event loop a turn every few milliseconds; a session over the server's replay limits
 * (`maxReplayMessages`, `maxReplayCharacters`) is refused with 422 `session_too_large`.
 *
 * @example
 * registerInspectorRoutes(app, context);
 */
export function registerInspectorRoutes(app: Hono<ServerEnv>, context: ServerContext): void {
  const { store, directory, engines, upstream, limits, replays } = context;
  const cache = new TimelineCache<SessionTimeline>(limits.maxReplayCharacters);

  const timelineOf = async (tenant: string, id: string): Promise<SessionTimeline> => {
    const { record, storeId } = await directory.requireStored(tenant, id);
    checkReplayMessages(id, record.messageCount, limits);
    const version = `${record.updatedAt}|${record.messageCount}|${record.nextSeq}`;
    return cache.get(`${tenant}\u0000${storeId}`, version, () =>
      replays.run(async () => {
        const settings = (await engines.engine(tenant)).settings;
        const rows = (await store.dumpSession(storeId)).rows;
        const messages = rows.map((row) => row.message).sort((a, b) => a.seq - b.seq);
        const characters = checkReplayCharacters(id, messages, limits);
        const replay = await sessionReplaySettings(
          messages,
          settings,
          upstream?.model,
          readGovernanceRecord(record.metadata),
        );
        const timeline = await buildTimeline(messages, replay);
        return {
          timeline: {
            ...timeline,
            ...(replay.model !== undefined && { model: replay.model }),
            settingsFrom: replay.settingsFrom,
          },
          characters,
        };
      }),
    );
  };

  app.get("/v1/sessions/:id/timeline", async (c) => {
    const id = c.req.param("id");
    const timeline = await timelineOf(c.get("tenant"), id);
    return c.json({
      sessionId: id,
      contextWindow: timeline.contextWindow,
      usable: timeline.usable,
      fixedTokens: timeline.fixedTokens,
      model: timeline.model,
      settingsFrom: timeline.settingsFrom,
      summarizer: "extractive",
      cacheModel: cacheModelJson(timeline.cache),
      totals: timeline.totals,
      requests: timeline.requests,
    });
  });

  app.get("/v1/sessions/:id/timeline/:index", async (c) => {
    const id = c.req.param("id");
    const tenant = c.get("tenant");
    const timeline = await timelineOf(tenant, id);
    const index = requestIndex(c.req.param("index"), timeline);
    const messages = publicMessages(tenant, timeline.views[index]!);
    return c.json({
      sessionId: id,
      request: timeline.requests[index],
      messages,
      openai: toOpenAIChatJson(messages, { reasoning: "omit" }),
      summaries: messages
        .filter((message) => message.kind === "summary")
        .map((message) => ({ id: message.id, text: messageText(message) })),
    });
  });

  app.get("/v1/sessions/:id/timeline/:index/offloaded/:ref", async (c) => {
    const id = c.req.param("id");
    const ref = c.req.param("ref");
    const timeline = await timelineOf(c.get("tenant"), id);
    requestIndex(c.req.param("index"), timeline);
    const text = await timeline.offloaded(ref);
    if (text === undefined) throw notFound("offloaded output", ref);
    return c.json({ ref, text });
  });
}
