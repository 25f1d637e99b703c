import { z } from "zod";
import { jsonValueSchema, jsonObjectSchema } from "../../../model/schemas.ts";

const providerOptions = z.record(z.string(), jsonObjectSchema).optional();
const bytes = z.union([z.instanceof(Uint8Array), z.instanceof(ArrayBuffer)]);
const reference = z.record(z.string(), z.string());

/** Tagged file data, as the AI SDK v7 prefers it. */
const taggedData = z.discriminatedUnion("type", [
  z.object({ type: z.literal("data"), data: z.union([z.string(), bytes]) }),
  z.object({ type: z.literal("url"), url: z.instanceof(URL) }),
  z.object({ type: z.literal("reference"), reference }),
  z.object({ type: z.literal("text"), text: z.string() }),
]);

/** File data in any form the AI SDK accepts: tagged, or bare bytes, base64 / URL string, URL or reference. */
export const fileDataSchema = z.union([taggedData, z.string(), bytes, z.instanceof(URL), reference]);

const text = z.object({ type: z.literal("text"), text: z.string(), providerOptions });
const file = z.object({
  type: z.literal("file"),
  data: fileDataSchema,
  mediaType: z.string().min(1),
  filename: z.string().optional(),
  providerOptions,
});
const image = z.object({
  type: z.literal("image"),
  image: fileDataSchema,
  mediaType: z.string().optional(),
  providerOptions,
});
const reasoning = z.object({ type: z.literal("reasoning"), text: z.string(), providerOptions });
const toolCall = z.object({
  type: z.literal("tool-call"),
  toolCallId: z.string().min(1, "a tool call needs a toolCallId"),
  toolName: z.string().min(1),
  input: jsonValueSchema,
  providerOptions,
  /** A provider-executed call (a server tool such as web search) is kept opaque, with its result. */
  providerExecuted: z.boolean().optional(),
});
/** Provider-specific content (`kind` is `{provider}.{type}`), kept opaque. */
const custom = z.object({
  type: z.literal("custom"),
  kind: z.string().regex(/^[^.]+\..+$/, "a custom part's kind is {provider}.{type}"),
  providerOptions,
});
/** A file the model generated while reasoning, kept opaque. */
const reasoningFile = z.object({
  type: z.literal("reasoning-file"),
  data: z.union([
    z.object({ type: z.literal("data"), data: z.union([z.string(), bytes]) }),
    z.object({ type: z.literal("url"), url: z.instanceof(URL) }),
    z.string(),
    bytes,
    z.instanceof(URL),
  ]),
  mediaType: z.string().min(1),
  providerOptions,
});

const outputFile = z.object({
  type: z.literal("file"),
  data: taggedData,
  mediaType: z.string().min(1),
  filename: z.string().optional(),
  providerOptions,
});
const outputContent = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text"), text: z.string(), providerOptions }),
  outputFile,
  z.object({
    type: z.literal("file-data"),
    data: z.string(),
    mediaType: z.string().min(1),
    filename: z.string().optional(),
    providerOptions,
  }),
  z.object({
    type: z.literal("image-data"),
    data: z.string(),
    mediaType: z.string().min(1),
    providerOptions,
  }),
  z.object({
    type: z.literal("file-url"),
    url: z.string(),
    mediaType: z.string().optional(),
    providerOptions,
  }),
  z.object({ type: z.literal("image-url"), url: z.string(), providerOptions }),
  z.object({ type: z.literal("file-id"), fileId: z.union([z.string(), reference]), providerOptions }),
  z.object({ type: z.literal("image-file-id"), fileId: z.union([z.string(), reference]), providerOptions }),
  z.object({ type: z.literal("file-reference"), providerReference: reference, providerOptions }),
  z.object({ type: z.literal("image-file-reference"), providerReference: reference, providerOptions }),
]);

const output = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text"), value: z.string(), providerOptions }),
  z.object({ type: z.literal("json"), value: jsonValueSchema, providerOptions }),
  z.object({ type: z.literal("error-text"), value: z.string(), providerOptions }),
  z.object({ type: z.literal("error-json"), value: jsonValueSchema, providerOptions }),
  z.object({ type: z.literal("execution-denied"), reason: z.string().optional(), providerOptions }),
  z.object({ type: z.literal("content"), value: z.array(outputContent) }),
]);

const toolResult = z.object({
  type: z.literal("tool-result"),
  toolCallId: z.string().min(1, "a tool result needs the toolCallId it answers"),
  toolName: z.string(),
  output,
  providerOptions,
});

/** A provider-executed tool's result, in assistant content: kept opaque, so its output must be JSON. */
const providerToolResult = z.object({
  type: z.literal("tool-result"),
  toolCallId: z.string().min(1, "a tool result needs the toolCallId it answers"),
  toolName: z.string(),
  output: output.refine(
    (value) => jsonValueSchema.safeParse(value).success,
    "a provider-executed tool's output is kept as JSON; send file data in it as base64",
  ),
  providerOptions,
});

const system = z.object({ role: z.literal("system"), content: z.string(), providerOptions });

/** Schema of the AI SDK `ModelMessage[]` `fromAiSdk` accepts (the parts ctxkit can represent). */
export const aiSdkMessagesSchema = z.array(
  z.discriminatedUnion("role", [
    system,
    z.object({
      role: z.literal("user"),
      content: z.union([z.string(), z.array(z.discriminatedUnion("type", [text, image, file]))]),
      providerOptions,
    }),
    z.object({
      role: z.literal("assistant"),
      content: z.union([
        z.string(),
        z.array(
          z.discriminatedUnion("type", [
            text,
            reasoning,
            toolCall,
            file,
            providerToolResult,
            custom,
            reasoningFile,
          ]),
        ),
      ]),
      providerOptions,
    }),
    z.object({ role: z.literal("tool"), content: z.array(toolResult), providerOptions }),
  ]),
);

/** Schema of an AI SDK prompt: `{ instructions?, messages }` (`system` is the deprecated name of `instructions`). */
export const aiSdkPromptSchema = z.object({
  instructions: z.union([z.string(), system, z.array(system)]).optional(),
  system: z.union([z.string(), system, z.array(system)]).optional(),
  messages: aiSdkMessagesSchema,
});

/** A validated message. */
export type ParsedAiSdkMessage = z.output<typeof aiSdkMessagesSchema>[number];
/** Validated file data in any form. */
export type ParsedFileData = z.output<typeof fileDataSchema>;
/** A validated tool result output. */
export type ParsedToolOutput = z.output<typeof output>;
