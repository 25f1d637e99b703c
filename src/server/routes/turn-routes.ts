import type { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { z } from "zod";
import { contentBlockSchema, jsonValueSchema } from "../../model/schemas.ts";
import { HttpError } from "../http/http-error.ts";
import { readJson } from "../http/json-body.ts";
import { toolDefinitions } from "../proxy/chat-request.ts";
import { upstreamChatMessages } from "../proxy/chat-message-pieces.ts";
import { serveProxyTurn } from "../proxy/serve-proxy-turn.ts";
import type { ClientTurn } from "../proxy/session-inputs.ts";
import type { ServerContext, ServerEnv } from "../server-context.ts";
import { readChatStream } from "../upstream/read-chat-stream.ts";
import { publicMessages } from "../tenancy/tenant-session-id.ts";
import { storedSessionJson } from "./session-json.ts";
import { requireUpstream } from "./turn-support.ts";

/**
 * Where a client's blocks point into the server's blob store (`ref`, `offloadRef`): the store's blobs are shared
 * by every tenant and resolved when a request is sent, so a client may not name one — it sends the media itself.
 */
function blobReferencesIn(blocks: readonly z.output<typeof contentBlockSchema>[]): string[] {
  return blocks.flatMap((block, index) => {
    if ((block.type === "image" || block.type === "file") && block.ref !== undefined) return [`${index}.ref`];
    if (block.type !== "tool-result") return [];
    return [
      ...(block.offloadRef === undefined ? [] : [`${index}.offloadRef`]),
      ...(block.attachments ?? []).flatMap((item, at) =>
        item.ref === undefined ? [] : [`${index}.attachments.${at}.ref`],
      ),
    ];
  });
}

const messageBlocksSchema = z
  .array(contentBlockSchema)
  .min(1)
  .superRefine((blocks, context) => {
    for (const path of blobReferencesIn(blocks))
      context.addIssue({
        code: "custom",
        path: path.split(".").map((part) => (/^\d+$/.test(part) ? Number(part) : part)),
        message: "blob references are the server's own: send the media as base64 data or a url",
      });
  });

const turnSchema = z
  .object({
    message: z.union([z.string().min(1), messageBlocksSchema]).optional(),
    toolResults: z
      .array(
        z.object({ callId: z.string().min(1), content: jsonValueSchema, isError: z.boolean().optional() }),
      )
      .min(1)
      .optional(),
    system: z.string().optional(),
    tools: z.array(z.unknown()).optional(),
    model: z.string().min(1).optional(),
    temperature: z.number().min(0).max(2).optional(),
    maxTokens: z.number().int().positive().optional(),
  })
  .refine((body) => (body.message === undefined) !== (body.toolResults === undefined), {
    message: "send exactly one of message and toolResults",
  });

type TurnBody = z.output<typeof turnSchema>;

function turnOf(body: TurnBody): ClientTurn {
  const inputs: ClientTurn["inputs"] =
    body.message !== undefined
      ? [
          {
            role: "user",
            content: typeof body.message === "string" ? [{ type: "text", text: body.message }] : body.message,
          },
        ]
      : (body.toolResults ?? []).map((result) => ({
          role: "tool" as const,
          result: {
            callId: result.callId,
            toolName: "",
            content: result.content,
            ...(result.isError === true && { isError: true }),
          },
        }));
  return { system: body.system, inputs };
}

/**
 * `POST /v1/sessions/:id/turns`: one model request of a session with the configured upstream, streamed as
 * Server-Sent Events — `governance` (each event of the governed request), `delta` and `reasoning` (pieces of the
 * reply), then `done` (the stored message, usage, finish reason and session) or `error` (nothing stored).
 *
 * @example
 * registerTurnRoutes(app, context);
 */
export function registerTurnRoutes(app: Hono<ServerEnv>, context: ServerContext): void {
  app.post("/v1/sessions/:id/turns", async (c) => {
    const started = performance.now();
    const tenant = c.get("tenant");
    const id = c.req.param("id");
    const upstream = requireUpstream(context);
    const body = await readJson(c, turnSchema, "turn");
    const model = upstream.model ?? body.model;
    if (model === undefined)
      throw new HttpError(400, "invalid_input", "name the model: this server has no default model");
    return serveProxyTurn(
      c,
      context,
      { sessionId: id, started },
      {
        upstream,
        provider: "openai-compatible",
        tools: toolDefinitions(body.tools),
        inputs: async () => turnOf(body),
        body: async (prepared) => ({
          model,
          messages: await upstreamChatMessages(prepared, context.store.blobs, upstream),
          stream: true,
          stream_options: { include_usage: true },
          ...(body.tools !== undefined && body.tools.length > 0 && { tools: body.tools }),
          ...(body.temperature !== undefined && { temperature: body.temperature }),
          ...(body.maxTokens !== undefined && { max_tokens: body.maxTokens }),
        }),
        respond: async ({ call, events }, ending) =>
          streamSSE(c, async (stream) => {
            stream.onAbort(() => call.abort(new Error("the client went away")));
            try {
              for (const event of events)
                await stream.writeSSE({ event: "governance", data: JSON.stringify(event) });
              const outcome = await readChatStream(call, async (_event, delta) => {
                if (delta === undefined) return;
                if (delta.reasoning !== "")
                  await stream.writeSSE({
                    event: "reasoning",
                    data: JSON.stringify({ text: delta.reasoning }),
                  });
                if (delta.text !== "")
                  await stream.writeSSE({ event: "delta", data: JSON.stringify({ text: delta.text }) });
              });
              if (!outcome.complete)
                throw new HttpError(
                  502,
                  "upstream_error",
                  "the upstream stream ended before the reply was complete",
                );
              const { message, session: record } = await ending.complete(outcome.reply);
              await stream.writeSSE({
                event: "done",
                data: JSON.stringify({
                  message: publicMessages(tenant, [message])[0],
                  usage: outcome.reply.usage ?? null,
                  finishReason: outcome.reply.finishReason ?? null,
                  session: record === undefined ? null : storedSessionJson(record, tenant),
                }),
              });
            } catch (error) {
              ending.fail(error);
              const answer = ending.answer(error);
              if (!stream.aborted)
                await stream.writeSSE({
                  event: "error",
                  data: JSON.stringify({ code: answer.code, message: answer.message }),
                });
            }
          }),
      },
    );
  });
}
