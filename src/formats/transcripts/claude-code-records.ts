import { z } from "zod";
import { jsonValueSchema } from "../../model/schemas.ts";

/** The envelope fields of a Claude Code JSONL record that the importer reads. */
export const claudeRecordSchema = z.looseObject({
  type: z.string(),
  uuid: z.string().optional(),
  parentUuid: z.string().nullish(),
  logicalParentUuid: z.string().nullish(),
  isSidechain: z.boolean().optional(),
  agentId: z.string().nullish(),
  sessionId: z.string().nullish(),
  timestamp: z.string().optional(),
  isMeta: z.boolean().optional(),
  isCompactSummary: z.boolean().optional(),
  isApiErrorMessage: z.boolean().optional(),
  subtype: z.string().optional(),
  content: z.unknown().optional(),
  compactMetadata: z
    .looseObject({ trigger: z.string().optional(), preTokens: z.number().optional() })
    .optional(),
  summary: z.string().optional(),
  leafUuid: z.string().optional(),
});

/** A Claude Code record (envelope only). */
export type ClaudeRecord = z.output<typeof claudeRecordSchema>;

const anyBlockSchema = z.looseObject({ type: z.string() });

const usageSchema = z.looseObject({
  input_tokens: z.number().optional(),
  output_tokens: z.number().optional(),
  cache_creation_input_tokens: z.number().nullish(),
  cache_read_input_tokens: z.number().nullish(),
  cache_creation: z.looseObject({ ephemeral_1h_input_tokens: z.number().nullish() }).nullish(),
});

/** The `message` of a `user` or `assistant` record. */
export const claudeMessageSchema = z.looseObject({
  id: z.string().optional(),
  model: z.string().optional(),
  content: z.union([z.string(), z.array(anyBlockSchema)]),
  usage: usageSchema.nullish(),
  stop_reason: z.string().nullish(),
});

/** The `message` of a conversational record. */
export type ClaudeMessage = z.output<typeof claudeMessageSchema>;

/** Anthropic's usage object. */
export type ClaudeUsage = z.output<typeof usageSchema>;

const sourceSchema = z.looseObject({
  type: z.string(),
  media_type: z.string().optional(),
  data: z.string().optional(),
  url: z.string().optional(),
});

/** Shapes of the content blocks the importer converts, by `type`. */
export const claudeBlockSchemas = {
  text: z.looseObject({ type: z.literal("text"), text: z.string() }),
  thinking: z.looseObject({
    type: z.literal("thinking"),
    thinking: z.string(),
    signature: z.string().optional(),
  }),
  redacted_thinking: z.looseObject({ type: z.literal("redacted_thinking"), data: z.string() }),
  tool_use: z.looseObject({
    type: z.literal("tool_use"),
    id: z.string().min(1),
    name: z.string().min(1),
    input: jsonValueSchema,
  }),
  tool_result: z.looseObject({
    type: z.literal("tool_result"),
    tool_use_id: z.string().min(1),
    content: z.union([z.string(), z.array(anyBlockSchema)]).nullish(),
    is_error: z.boolean().nullish(),
  }),
  image: z.looseObject({ type: z.literal("image"), source: sourceSchema }),
  document: z.looseObject({ type: z.literal("document"), source: sourceSchema, title: z.string().nullish() }),
};
