import { z } from "zod";
import { jsonValueSchema } from "../../../model/schemas.ts";

const textPart = z.object({ type: z.literal("text"), text: z.string() });
const refusalPart = z.object({ type: z.literal("refusal"), refusal: z.string() });

const userPart = z.discriminatedUnion("type", [
  textPart,
  z.object({
    type: z.literal("image_url"),
    image_url: z.object({ url: z.string().min(1), detail: z.string().optional() }),
  }),
  z.object({
    type: z.literal("file"),
    file: z
      .object({
        file_data: z.string().optional(),
        file_id: z.string().optional(),
        filename: z.string().optional(),
      })
      .refine(
        (file) => file.file_data !== undefined || file.file_id !== undefined,
        "a file needs file_data or file_id",
      ),
  }),
  z.object({
    type: z.literal("input_audio"),
    input_audio: z.object({ data: z.string(), format: z.enum(["wav", "mp3"]) }),
  }),
]);

const toolCall = z.union([
  z.object({
    id: z.string().min(1, "a tool call needs an id"),
    type: z.literal("function").optional(),
    function: z.object({ name: z.string().min(1), arguments: z.string() }),
  }),
  z.object({
    id: z.string().min(1, "a tool call needs an id"),
    type: z.literal("custom"),
    custom: z.object({ name: z.string().min(1), input: z.string() }),
  }),
]);

const reasoningDetail = z.looseObject({
  type: z.enum(["reasoning.text", "reasoning.summary", "reasoning.encrypted"]),
  text: z.string().nullish(),
  summary: z.string().nullish(),
  data: z.string().nullish(),
  signature: z.string().nullish(),
});

const systemContent = z.union([z.string(), z.array(textPart)]);

/** Schema of the OpenAI Chat Completions messages `fromOpenAIChat` accepts. */
export const openAIChatMessagesSchema = z.array(
  z.discriminatedUnion("role", [
    z.object({ role: z.literal("system"), content: systemContent }),
    z.object({ role: z.literal("developer"), content: systemContent }),
    z.object({ role: z.literal("user"), content: z.union([z.string(), z.array(userPart)]) }),
    z.object({
      role: z.literal("assistant"),
      content: z.union([z.string(), z.array(z.union([textPart, refusalPart]))]).nullish(),
      refusal: z.string().nullish(),
      annotations: z.array(jsonValueSchema).nullish(),
      tool_calls: z.array(toolCall).nullish(),
      reasoning_content: z.string().nullish(),
      reasoning: z.string().nullish(),
      reasoning_details: z.array(reasoningDetail).nullish(),
    }),
    z.object({
      role: z.literal("tool"),
      tool_call_id: z.string().min(1, "a tool message needs the id of the call it answers"),
      content: z.union([z.string(), z.array(textPart)]),
      name: z.string().optional(),
    }),
  ]),
);

/** A validated OpenAI chat message as `fromOpenAIChat` reads it. */
export type ParsedOpenAIChatMessage = z.output<typeof openAIChatMessagesSchema>[number];
