import { z } from "zod";
import { jsonObjectSchema } from "../../../model/schemas.ts";

const text = z.object({ type: z.literal("text"), text: z.string() });

const image = z.object({
  type: z.literal("image"),
  source: z.discriminatedUnion("type", [
    z.object({ type: z.literal("base64"), media_type: z.string().min(1), data: z.string() }),
    z.object({ type: z.literal("url"), url: z.string().min(1) }),
    z.object({ type: z.literal("file"), file_id: z.string().min(1) }),
  ]),
});

// Loose: a document's settings ctxkit does not model (`citations`, `context`) are kept and sent back.
const document = z.looseObject({
  type: z.literal("document"),
  source: z.discriminatedUnion("type", [
    z.object({ type: z.literal("base64"), media_type: z.string().min(1), data: z.string() }),
    z.object({ type: z.literal("text"), media_type: z.literal("text/plain"), data: z.string() }),
    z.object({ type: z.literal("url"), url: z.string().min(1) }),
    z.object({ type: z.literal("file"), file_id: z.string().min(1) }),
  ]),
  title: z.string().optional(),
});

/** Document sources ctxkit reads (a `content` source, a list of blocks, is kept opaque). */
const DOCUMENT_SOURCES: ReadonlySet<unknown> = new Set(["base64", "text", "url", "file"]);

/**
 * A block of a type ctxkit does not model, kept as it came: a server tool's call or result, a `search_result`, a
 * `tool_reference`, a document whose source ctxkit cannot read, or a type newer than ctxkit. `modelled` are the
 * types the other branch of the union reads, so a malformed block of those is reported as such, not taken in.
 * Parsed, it is `{ type: "opaque", data }` (no Anthropic block has that type, and `data` keeps its own).
 */
function otherBlock(modelled: readonly string[]) {
  return jsonObjectSchema
    .refine((block) => {
      const type = block["type"];
      if (typeof type !== "string" || type === "") return false;
      if (type === "document" && modelled.includes(type)) {
        const source = block["source"];
        const kind =
          typeof source === "object" && source !== null && !Array.isArray(source) ? source["type"] : "";
        return !DOCUMENT_SOURCES.has(kind);
      }
      return !modelled.includes(type);
    }, "an unknown block needs a type of its own")
    .transform((data) => ({ type: "opaque" as const, data }));
}

const toolResult = z.object({
  type: z.literal("tool_result"),
  tool_use_id: z.string().min(1, "a tool result needs the id of the tool_use it answers"),
  content: z
    .union([
      z.string(),
      z.array(
        z.union([
          z.discriminatedUnion("type", [text, image, document]),
          otherBlock(["text", "image", "document"]),
        ]),
      ),
    ])
    .optional(),
  is_error: z.boolean().optional(),
});

const userBlock = z.union([
  z.discriminatedUnion("type", [text, image, document, toolResult]),
  otherBlock(["text", "image", "document", "tool_result"]),
]);

const assistantBlock = z.union([
  z.discriminatedUnion("type", [
    text,
    z.object({ type: z.literal("thinking"), thinking: z.string(), signature: z.string().optional() }),
    z.object({ type: z.literal("redacted_thinking"), data: z.string() }),
    z.looseObject({
      type: z.literal("tool_use"),
      id: z.string().min(1, "a tool_use needs an id"),
      name: z.string().min(1),
      input: jsonObjectSchema,
    }),
  ]),
  otherBlock(["text", "thinking", "redacted_thinking", "tool_use"]),
]);

/** Schema of the Anthropic Messages payload `fromAnthropic` accepts (other request fields are ignored). */
export const anthropicPayloadSchema = z.object({
  system: z.union([z.string(), z.array(text)]).optional(),
  messages: z.array(
    z.discriminatedUnion("role", [
      z.object({
        role: z.literal("user"),
        content: z.union([z.string(), z.array(userBlock)]),
      }),
      z.object({ role: z.literal("assistant"), content: z.union([z.string(), z.array(assistantBlock)]) }),
      z.object({ role: z.literal("system"), content: z.union([z.string(), z.array(text)]) }),
    ]),
  ),
});

/** A validated Anthropic payload. */
export type ParsedAnthropicPayload = z.output<typeof anthropicPayloadSchema>;
