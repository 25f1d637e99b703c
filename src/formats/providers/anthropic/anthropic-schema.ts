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

const document = z.object({
  type: z.literal("document"),
  source: z.discriminatedUnion("type", [
    z.object({ type: z.literal("base64"), media_type: z.string().min(1), data: z.string() }),
    z.object({ type: z.literal("text"), media_type: z.literal("text/plain"), data: z.string() }),
    z.object({ type: z.literal("url"), url: z.string().min(1) }),
    z.object({ type: z.literal("file"), file_id: z.string().min(1) }),
  ]),
  title: z.string().optional(),
});

const toolReference = z.looseObject({ type: z.literal("tool_reference"), tool_name: z.string().min(1) });

const toolResult = z.object({
  type: z.literal("tool_result"),
  tool_use_id: z.string().min(1, "a tool result needs the id of the tool_use it answers"),
  content: z
    .union([z.string(), z.array(z.discriminatedUnion("type", [text, image, document, toolReference]))])
    .optional(),
  is_error: z.boolean().optional(),
});

const assistantBlock = z.discriminatedUnion("type", [
  text,
  z.object({ type: z.literal("thinking"), thinking: z.string(), signature: z.string().optional() }),
  z.object({ type: z.literal("redacted_thinking"), data: z.string() }),
  z.looseObject({
    type: z.literal("tool_use"),
    id: z.string().min(1, "a tool_use needs an id"),
    name: z.string().min(1),
    input: jsonObjectSchema,
  }),
]);

/** Schema of the Anthropic Messages payload `fromAnthropic` accepts (other request fields are ignored). */
export const anthropicPayloadSchema = z.object({
  system: z.union([z.string(), z.array(text)]).optional(),
  messages: z.array(
    z.discriminatedUnion("role", [
      z.object({
        role: z.literal("user"),
        content: z.union([
          z.string(),
          z.array(z.discriminatedUnion("type", [text, image, document, toolResult])),
        ]),
      }),
      z.object({ role: z.literal("assistant"), content: z.union([z.string(), z.array(assistantBlock)]) }),
      z.object({ role: z.literal("system"), content: z.union([z.string(), z.array(text)]) }),
    ]),
  ),
});

/** A validated Anthropic payload. */
export type ParsedAnthropicPayload = z.output<typeof anthropicPayloadSchema>;
