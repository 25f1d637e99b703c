import type { Hono } from "hono";
import { stream } from "hono/streaming";
import { EXPORT_HEADER, sessionJsonlLines } from "../../store/jsonl/export-sessions-jsonl.ts";
import type { LoadStrategy } from "../../store/session-store.ts";
import { HttpError, notFound } from "../http/http-error.ts";
import type { ServerContext, ServerEnv } from "../server-context.ts";
import { publicDump, publicMessages } from "../tenancy/tenant-session-id.ts";

/** The stores' load strategies, and `summaries`: only the summaries stored in the session (superseded ones too). */
type MessagesStrategy = LoadStrategy | "summaries";
const STRATEGIES: readonly MessagesStrategy[] = ["full", "recent", "all", "summaries"];

/**
 * Routes that read a session's stored data: its ctxkit JSONL export, its messages in view order (or only its
 * summaries, without the history they replaced), and the blobs linked to it (a blob of another session — of any
 * tenant — answers 404).
 *
 * @example
 * registerSessionDataRoutes(app, context);
 */
export function registerSessionDataRoutes(app: Hono<ServerEnv>, context: ServerContext): void {
  const { store, directory } = context;

  app.get("/v1/sessions/:id/export", async (c) => {
    const tenant = c.get("tenant");
    const { id, storeId } = await directory.requireStored(tenant, c.req.param("id"));
    const dump = publicDump(tenant, await store.dumpSession(storeId));
    c.header("Content-Type", "application/x-ndjson; charset=utf-8");
    c.header(
      "Content-Disposition",
      `attachment; filename="${id.replace(/[^A-Za-z0-9._-]/g, "_")}.ctxkit.jsonl"`,
    );
    return stream(c, async (output) => {
      await output.write(`${EXPORT_HEADER}\n`);
      for (const line of sessionJsonlLines(dump)) await output.write(`${line}\n`);
    });
  });

  app.get("/v1/sessions/:id/messages", async (c) => {
    const tenant = c.get("tenant");
    const owned = await directory.require(tenant, c.req.param("id"));
    const strategy = (c.req.query("strategy") ?? "full") as MessagesStrategy;
    if (!STRATEGIES.includes(strategy)) {
      throw new HttpError(400, "invalid_input", `strategy must be one of ${STRATEGIES.join(", ")}`);
    }
    if (owned.kind === "reserved") return c.json({ messages: [] });
    if (strategy === "summaries") {
      const stored = await store.loadMessages(owned.storeId, { strategy: "all" });
      return c.json({
        messages: publicMessages(
          tenant,
          stored.filter((message) => message.kind === "summary"),
        ),
      });
    }
    const load = async (loading: LoadStrategy) =>
      publicMessages(tenant, await store.loadMessages(owned.storeId, { strategy: loading }));
    if (strategy !== "all") return c.json({ messages: await load(strategy) });
    const dump = await store.dumpSession(owned.storeId);
    const summarizedBy: Record<string, number> = {};
    for (const row of dump.rows)
      if (row.summarizedBy !== undefined) summarizedBy[String(row.message.seq)] = row.summarizedBy;
    return c.json({ messages: await load("all"), summarizedBy });
  });

  app.get("/v1/sessions/:id/blobs/:ref", async (c) => {
    const ref = c.req.param("ref");
    const { storeId } = await directory.requireStored(c.get("tenant"), c.req.param("id"));
    const linked = (await store.blobs.list(storeId)).find((blob) => blob.ref === ref);
    const bytes = linked === undefined ? undefined : await store.blobs.getBytes(ref);
    if (linked === undefined || bytes === undefined) throw notFound("blob", ref);
    return c.body(new Uint8Array(bytes), 200, {
      "Content-Type": linked.isText ? `${linked.mediaType}; charset=utf-8` : linked.mediaType,
      "Content-Disposition": "attachment",
    });
  });
}
