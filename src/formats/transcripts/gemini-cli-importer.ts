import { z } from "zod";
import type { ContentBlock, JsonValue, ToolResultBlock, Usage } from "../../model/message.ts";
import { jsonObjectSchema, jsonValueSchema } from "../../model/schemas.ts";
import type { ImportedConversation } from "./imported-conversation.ts";
import { definedEntries } from "./json-or-string.ts";
import { parseJsonDocument } from "./json-lines.ts";
import { MessageListBuilder } from "./message-list-builder.ts";
import { expectShape } from "./record-shape.ts";
import { sourceStem } from "./source-name.ts";

const expected = "a Gemini CLI session {sessionId, messages:[{type, content, …}]}";

const partsSchema = z.union([z.string(), z.array(z.looseObject({ text: z.string().optional() }))]);

const toolCallSchema = z.looseObject({
  id: z.string().min(1),
  name: z.string(),
  args: jsonValueSchema.optional(),
  status: z.string().optional(),
  resultDisplay: z.unknown().optional(),
  result: z
    .array(
      z.looseObject({
        functionResponse: z.looseObject({ response: jsonObjectSchema.optional() }).optional(),
      }),
    )
    .nullish(),
});

const messageSchema = z.looseObject({
  type: z.string(),
  timestamp: z.string().optional(),
  content: partsSchema.optional(),
  model: z.string().optional(),
  thoughts: z
    .array(z.looseObject({ subject: z.string().optional(), description: z.string().optional() }))
    .nullish(),
  tokens: z
    .looseObject({
      input: z.number(),
      output: z.number(),
      cached: z.number().optional(),
      thoughts: z.number().optional(),
      tool: z.number().optional(),
    })
    .nullish(),
  toolCalls: z.array(toolCallSchema).nullish(),
});

const sessionSchema = z.looseObject({
  sessionId: z.string().optional(),
  projectHash: z.string().optional(),
  startTime: z.string().optional(),
  lastUpdated: z.string().optional(),
  messages: z.array(z.unknown()),
});

/**
 * Imports a Gemini CLI session JSON file. A `gemini` message becomes an assistant message (thoughts as
 * reasoning blocks, then its text, then its tool calls) followed by one `tool` message per call, answered from
 * `toolCalls[].result[].functionResponse.response`. `tokens` becomes usage: `input` adds the tool-use prompt
 * tokens (cached included, as Gemini reports them), `output` adds thought tokens. UI-only messages (`info`,
 * `error`, `warning`) are left out.
 *
 * @example
 * const [conversation] = importGeminiCli(readFileSync(path, "utf8"), path);
 */
export function importGeminiCli(text: string, source: string): ImportedConversation[] {
  const session = expectShape(sessionSchema, parseJsonDocument(text, source, expected), { source }, expected);
  const id = session.sessionId ?? sourceStem(source);
  const builder = new MessageListBuilder(id);
  session.messages.forEach((value, index) => {
    const message = expectShape(messageSchema, value, { source, path: `messages[${index}]` }, expected);
    if (message.type === "user") {
      builder.add({ role: "user", content: textBlocks(message.content), createdAt: message.timestamp });
      return;
    }
    if (message.type !== "gemini") return;
    const content: ContentBlock[] = [
      ...(message.thoughts ?? []).map((thought): ContentBlock => ({
        type: "reasoning",
        text: [thought.subject, thought.description].filter(Boolean).join("\n\n"),
      })),
      ...textBlocks(message.content),
      ...(message.toolCalls ?? []).map((call): ContentBlock => ({
        type: "tool-call",
        id: call.id,
        name: call.name,
        input: call.args ?? {},
      })),
    ];
    builder.add({
      role: "assistant",
      content,
      createdAt: message.timestamp,
      ...definedEntries({ model: message.model, provider: "google", usage: usageOf(message.tokens) }),
    });
    for (const call of message.toolCalls ?? []) {
      builder.add({
        role: "tool",
        content: [{ type: "tool-result", callId: call.id, toolName: call.name, ...resultOf(call) }],
        createdAt: stringField(call, "timestamp") ?? message.timestamp,
      });
    }
  });
  return [
    {
      id,
      format: "gemini-cli",
      source,
      messages: builder.build(),
      metadata: definedEntries({
        projectHash: session.projectHash,
        startTime: session.startTime,
        lastUpdated: session.lastUpdated,
      }),
    },
  ];
}

function textBlocks(content: z.output<typeof partsSchema> | undefined): ContentBlock[] {
  if (content === undefined) return [];
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  return content.flatMap((part) => (part.text ? [{ type: "text" as const, text: part.text }] : []));
}

function resultOf(call: z.output<typeof toolCallSchema>): Pick<ToolResultBlock, "content" | "isError"> {
  const isError = call.status !== undefined && call.status !== "success" ? { isError: true } : {};
  const responses = (call.result ?? []).map((part) => part.functionResponse?.response);
  const outputs = responses.map((response): JsonValue => {
    if (response === undefined) return "";
    const output = response["output"] ?? response["error"];
    return typeof output === "string" ? output : response;
  });
  if (outputs.length === 0) {
    const display = call.resultDisplay;
    return { content: typeof display === "string" ? display : "", ...isError };
  }
  const content = outputs.every((output) => typeof output === "string")
    ? outputs.join("\n")
    : outputs.length === 1
      ? outputs[0]!
      : outputs;
  return { content, ...isError };
}

function usageOf(tokens: z.output<typeof messageSchema>["tokens"]): Usage | undefined {
  if (!tokens) return undefined;
  return definedEntries({
    input: tokens.input + (tokens.tool ?? 0),
    output: tokens.output + (tokens.thoughts ?? 0),
    cacheRead: tokens.cached,
    reasoning: tokens.thoughts,
  }) as Usage;
}

function stringField(record: Record<string, unknown>, key: string): string | undefined {
  const value = record[key];
  return typeof value === "string" ? value : undefined;
}
