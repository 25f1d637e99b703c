import type { Hono } from "hono";
import { z } from "zod";
import { MEMORY_KINDS, type Memory, type MemoryKind, type MemoryStore } from "../../memory/memory-store.ts";
import { limitParameter } from "../http/limit-parameter.ts";
import { HttpError, notFound } from "../http/http-error.ts";
import { readJson } from "../http/json-body.ts";
import type { ServerContext, ServerEnv } from "../server-context.ts";
import { publicSessionId } from "../tenancy/tenant-session-id.ts";
import { jsonObjectSchema } from "../../model/schemas.ts";

const addSchema = z.object({
  kind: z.enum(MEMORY_KINDS),
  content: z.string(),
  scope: z.enum(["user", "project", "global"]).optional(),
  sourceSessionId: z.string().min(1).max(200).optional(),
  expiresAt: z.string().optional(),
  metadata: jsonObjectSchema.optional(),
});

/**
 * A memory as the API shows it to its tenant: without its owner, its source session by the tenant's id.
 *
 * @example
 * c.json({ memory: memoryJson(memory, tenant) });
 */
export function memoryJson(memory: Memory, tenant: string): Omit<Memory, "owner"> {
  const { owner: _owner, ...rest } = memory;
  if (rest.sourceSessionId === undefined) return rest;
  return { ...rest, sourceSessionId: publicSessionId(tenant, rest.sourceSessionId) };
}

function kindsOf(value: string | undefined): MemoryKind[] | undefined {
  if (value === undefined || value === "") return undefined;
  const kinds = value.split(",");
  for (const kind of kinds) {
    if (!(MEMORY_KINDS as readonly string[]).includes(kind)) {
      throw new HttpError(400, "invalid_input", `kind must be among ${MEMORY_KINDS.join(", ")}`);
    }
  }
  return kinds as MemoryKind[];
}

/**
 * Long-term memory routes: list or search, add, get, delete — always with the request's tenant as the owner,
 * so another tenant's memory id answers 404. Without a memory store they answer 503.
 *
 * @example
 * registerMemoryRoutes(app, context);
 */
export function registerMemoryRoutes(app: Hono<ServerEnv>, context: ServerContext): void {
  const memoryStore = (): MemoryStore => {
    if (context.memory === undefined) {
      throw new HttpError(
        503,
        "not_configured",
        "this server has no memory store; start it with memory enabled",
      );
    }
    return context.memory;
  };

  app.get("/v1/memory", async (c) => {
    const owner = c.get("tenant");
    const kinds = kindsOf(c.req.query("kind"));
    const limit = limitParameter(c.req.query("limit"));
    const filter = { owner, ...(kinds !== undefined && { kinds }), ...(limit !== undefined && { limit }) };
    const query = c.req.query("q");
    if (query !== undefined && query.trim() !== "") {
      const hits = await memoryStore().search(query, filter);
      return c.json({ hits: hits.map((hit) => ({ ...hit, memory: memoryJson(hit.memory, owner) })) });
    }
    return c.json({
      memories: (await memoryStore().list(filter)).map((memory) => memoryJson(memory, owner)),
    });
  });

  app.post("/v1/memory", async (c) => {
    const input = await readJson(c, addSchema, "memory");
    const result = await memoryStore().add({ ...input, owner: c.get("tenant") });
    return c.json(
      { memory: memoryJson(result.memory, c.get("tenant")), deduplicated: result.deduplicated },
      201,
    );
  });

  app.get("/v1/memory/:id", async (c) => {
    const id = c.req.param("id");
    const memory = await memoryStore().get(id, { owner: c.get("tenant") });
    if (memory === undefined) throw notFound("memory", id);
    return c.json({ memory: memoryJson(memory, c.get("tenant")) });
  });

  app.delete("/v1/memory/:id", async (c) => {
    const id = c.req.param("id");
    if (!(await memoryStore().delete(id, { owner: c.get("tenant") }))) throw notFound("memory", id);
    return c.body(null, 204);
  });
}
