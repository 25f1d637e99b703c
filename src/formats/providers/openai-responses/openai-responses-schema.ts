import { z } from "zod";

const inputText = z.object({ type: z.literal("input_text"), text: z.string() });
const inputImage = z
  .object({
    type: z.literal("input_image"),
    detail: z.string().optional(),
    image_url: z.string().nullish(),
    file_id: z.string().nullish(),
  })
  .refine(
    (image) => Boolean(image.image_url) || Boolean(image.file_id),
    "an input_image needs image_url or file_id",
  );
const inputFile = z
  .object({
    type: z.literal("input_file"),
    file_data: z.string().optional(),
    file_url: z.string().optional(),
    file_id: z.string().nullish(),
    filename: z.string().optional(),
  })
  .refine(
    (file) => file.file_data !== undefined || file.file_url !== undefined || Boolean(file.file_id),
    "an input_file needs file_data, file_url or file_id",
  );
const inputContent = z.discriminatedUnion("type", [inputText, inputImage, inputFile]);

const outputText = z.looseObject({ type: z.literal("output_text"), text: z.string() });
const refusal = z.object({ type: z.literal("refusal"), refusal: z.string() });

const message = z.looseObject({
  type: z.literal("message").optional(),
  role: z.enum(["user", "system", "developer"]),
  content: z.union([z.string(), z.array(inputContent)]),
});
const assistantMessage = z.looseObject({
  type: z.literal("message").optional(),
  role: z.literal("assistant"),
  content: z.union([z.string(), z.array(z.discriminatedUnion("type", [outputText, inputText, refusal]))]),
});
const reasoning = z.looseObject({
  type: z.literal("reasoning"),
  id: z.string().optional(),
  summary: z.array(z.object({ type: z.literal("summary_text"), text: z.string() })),
  encrypted_content: z.string().nullish(),
});
const callId = z.string().min(1, "a call needs a call_id");
const functionCall = z.looseObject({
  type: z.literal("function_call"),
  call_id: callId,
  name: z.string().min(1),
  arguments: z.string(),
});
const customToolCall = z.looseObject({
  type: z.literal("custom_tool_call"),
  call_id: callId,
  name: z.string().min(1),
  input: z.string(),
});
const callOutput = z.looseObject({
  type: z.enum(["function_call_output", "custom_tool_call_output"]),
  call_id: callId,
  output: z.union([z.string(), z.array(inputContent)]),
});

const modelledItem = z.union([
  message,
  assistantMessage,
  reasoning,
  functionCall,
  customToolCall,
  callOutput,
]);

/** The item types ctxkit models; any other typed item is kept opaque. */
const MODELLED = new Set([
  "message",
  "reasoning",
  "function_call",
  "custom_tool_call",
  "function_call_output",
  "custom_tool_call_output",
]);
/**
 * An item of a type ctxkit does not model (built-in tool calls and their outputs — `web_search_call`,
 * `file_search_call`, `local_shell_call`, `mcp_call`, … —, `item_reference`, `compaction`, newer types): kept as
 * sent.
 */
const opaqueItem = z
  .looseObject({ type: z.string() })
  // Aborting, so a malformed item of a modelled type is reported by its own schema's problems, not this one.
  .refine((item) => !MODELLED.has(item.type), { message: "an item of a type ctxkit models", abort: true });

/** Schema of the OpenAI Responses input items `fromOpenAIResponses` accepts. */
export const openAIResponsesInputSchema = z.array(z.union([modelledItem, opaqueItem]));

/** A validated input item. */
export type ParsedResponsesItem = z.output<typeof openAIResponsesInputSchema>[number];
/** A validated input item of a type ctxkit models. */
export type ParsedModelledItem = z.output<typeof modelledItem>;
/** Validated input content (a part of a message or of a tool output). */
export type ParsedResponsesContent = z.output<typeof inputContent>;
/** A validated user, system or developer message item. */
export type ParsedInputMessage = z.output<typeof message>;
/** A validated assistant message item. */
export type ParsedAssistantMessage = z.output<typeof assistantMessage>;
/** A validated tool output item. */
export type ParsedCallOutput = z.output<typeof callOutput>;

/** A validated item of a type ctxkit does not model. */
export type ParsedOpaqueItem = z.output<typeof opaqueItem>;

/** The item when its type is one ctxkit does not model (kept as an opaque block), else undefined. */
export function opaqueItemOf(item: ParsedResponsesItem): ParsedOpaqueItem | undefined {
  return item.type !== undefined && !MODELLED.has(item.type) ? (item as ParsedOpaqueItem) : undefined;
}

/**
 * True for an opaque item the client sends rather than the model: the output of a built-in tool the client runs
 * (`local_shell_call_output`, `computer_call_output`, …), an MCP approval, a reference to a stored item. It
 * stands on the user's side (so a request may end with it); every other opaque item is the model's.
 */
export function isClientItem(type: string): boolean {
  return type.endsWith("_output") || type === "mcp_approval_response" || type === "item_reference";
}

/** True for message items (which may omit `type`). */
export function isMessageItem(item: ParsedModelledItem): item is ParsedInputMessage | ParsedAssistantMessage {
  return item.type === undefined || item.type === "message";
}
