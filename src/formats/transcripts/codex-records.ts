import { z } from "zod";
import { jsonValueSchema } from "../../model/schemas.ts";

/** The envelope of every Codex rollout line. */
export const codexLineSchema = z.looseObject({
  timestamp: z.string().optional(),
  type: z.string(),
  payload: z.looseObject({ type: z.string().optional() }),
});

const contentItemSchema = z.looseObject({
  type: z.string(),
  text: z.string().optional(),
  refusal: z.string().optional(),
  image_url: z.string().optional(),
});

/** A content item of a message or a tool output: text or an image. */
export type CodexContentItem = z.output<typeof contentItemSchema>;

/** `session_meta` payload fields the importer reads. */
export const codexSessionMetaSchema = z.looseObject({
  id: z.string().optional(),
  cwd: z.string().optional(),
  cli_version: z.string().optional(),
  originator: z.string().optional(),
  model_provider: z.string().optional(),
  base_instructions: z.looseObject({ text: z.string() }).nullish(),
});

/** `response_item` payloads, by `payload.type`. */
export const codexItemSchemas = {
  message: z.looseObject({
    role: z.string(),
    content: z.array(contentItemSchema),
  }),
  reasoning: z.looseObject({
    id: z.string().optional(),
    summary: z.array(z.looseObject({ text: z.string().optional() })).nullish(),
    content: z.array(z.looseObject({ text: z.string().optional() })).nullish(),
    encrypted_content: z.string().nullish(),
  }),
  function_call: z.looseObject({ name: z.string(), arguments: z.string(), call_id: z.string().min(1) }),
  custom_tool_call: z.looseObject({ name: z.string(), input: z.string(), call_id: z.string().min(1) }),
  web_search_call: z.looseObject({ id: z.string().optional(), action: jsonValueSchema.optional() }),
  output: z.looseObject({
    call_id: z.string().min(1),
    output: z.union([z.string(), z.array(contentItemSchema), jsonValueSchema]),
  }),
  /** Any other call the client runs (`tool_search_call`, …): paired with its `*_output` by `call_id`. */
  otherCall: z.looseObject({
    type: z.string(),
    call_id: z.string().min(1),
    name: z.string().optional(),
    arguments: jsonValueSchema.optional(),
    input: jsonValueSchema.optional(),
    action: jsonValueSchema.optional(),
  }),
  /** The output of such a call (`tool_search_output`: the tools it loaded). */
  otherOutput: z.looseObject({ type: z.string(), call_id: z.string().min(1) }),
};

/** A `compacted` line: Codex replaced the history with a summary (`message`; empty when the server compacted). */
export const codexCompactedSchema = z.looseObject({ message: z.string().optional() });

/** `token_count` event payload: the usage of the request that just finished. */
export const codexTokenCountSchema = z.looseObject({
  info: z
    .looseObject({
      last_token_usage: z
        .looseObject({
          input_tokens: z.number(),
          cached_input_tokens: z.number().optional(),
          output_tokens: z.number(),
          reasoning_output_tokens: z.number().optional(),
        })
        .optional(),
    })
    .nullish(),
});
