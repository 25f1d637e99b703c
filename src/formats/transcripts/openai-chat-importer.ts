import { z } from "zod";
import { ParseError } from "../../errors/errors.ts";
import type { ContentBlock, JsonValue } from "../../model/message.ts";
import { jsonValueSchema } from "../../model/schemas.ts";
import { imageBlock } from "./codex-content.ts";
import type { ImportedConversation } from "./imported-conversation.ts";
import { definedEntries, jsonOrString } from "./json-or-string.ts";
import { parseJsonDocument } from "./json-lines.ts";
import { MessageListBuilder } from "./message-list-builder.ts";
import { expectShape } from "./record-shape.ts";
import { sourceStem } from "./source-name.ts";

const expected =
  "OpenAI chat messages: a list of {role, content}, {messages:[…]}, or tau-bench episodes {task_id, traj:[…]}";

const partSchema = z.looseObject({
  type: z.string(),
  text: z.string().optional(),
  image_url: z.union([z.string(), z.looseObject({ url: z.string() })]).optional(),
});

/** One OpenAI chat-completions message (the fields the importer reads). */
export const openaiChatMessageSchema = z.looseObject({
  role: z.string(),
  content: z.union([z.string(), z.array(partSchema)]).nullish(),
  name: z.string().optional(),
  tool_call_id: z.string().optional(),
  tool_calls: z
    .array(
      z.looseObject({
        id: z.string().min(1),
        function: z.looseObject({ name: z.string(), arguments: z.union([z.string(), jsonValueSchema]) }),
      }),
    )
    .nullish(),
});

const episodeSchema = z.looseObject({
  task_id: z.union([z.string(), z.number()]),
  trial: z.union([z.string(), z.number()]).optional(),
  reward: z.number().optional(),
  traj: z.array(z.unknown()),
});

/**
 * Imports OpenAI chat-completions JSON: one conversation from a list of messages (or `{messages}`), or one per
 * episode from a tau-bench results file (`[{task_id, trial, reward, traj}]`, ids `<file>:task-<id>-trial-<n>`).
 * `tool_calls[].function.arguments` are parsed when they are JSON; a `developer` or `system` message becomes a
 * `system` message.
 *
 * @example
 * const episodes = importOpenAiChat(readFileSync("gpt-4o-airline.json", "utf8"), "gpt-4o-airline.json");
 */
export function importOpenAiChat(text: string, source: string): ImportedConversation[] {
  const document = parseJsonDocument(text, source, expected);
  const stem = sourceStem(source);
  if (Array.isArray(document) && isEpisode(document[0])) {
    const used = new Set<string>();
    return document.map((value, index) => {
      const episode = expectShape(episodeSchema, value, { source, path: `[${index}]` }, expected);
      let id = `${stem}:task-${episode.task_id}-trial-${episode.trial ?? 0}`;
      if (used.has(id)) id = `${id}#${index}`;
      used.add(id);
      return {
        id,
        format: "openai" as const,
        source,
        messages: convertMessages(id, episode.traj, source, `[${index}].traj`),
        metadata: definedEntries({ taskId: episode.task_id, trial: episode.trial, reward: episode.reward }),
      };
    });
  }
  const messages = Array.isArray(document) ? document : messagesOf(document);
  if (messages === undefined) {
    throw new ParseError(
      source,
      undefined,
      expected,
      "the document is neither a list nor an object with a messages list",
    );
  }
  return [
    { id: stem, format: "openai", source, messages: convertMessages(stem, messages, source, "messages") },
  ];
}

function isEpisode(value: unknown): boolean {
  return typeof value === "object" && value !== null && Array.isArray((value as { traj?: unknown }).traj);
}

function messagesOf(document: unknown): unknown[] | undefined {
  if (typeof document !== "object" || document === null) return undefined;
  const messages = (document as { messages?: unknown }).messages;
  return Array.isArray(messages) ? messages : undefined;
}

function convertMessages(id: string, values: readonly unknown[], source: string, path: string) {
  const builder = new MessageListBuilder(id);
  const toolNames = new Map<string, string>();
  values.forEach((value, index) => {
    const message = expectShape(
      openaiChatMessageSchema,
      value,
      { source, path: `${path}[${index}]` },
      expected,
    );
    const content = contentBlocks(message.content);
    if (message.role === "assistant") {
      const calls = (message.tool_calls ?? []).map((call): ContentBlock => {
        toolNames.set(call.id, call.function.name);
        const input: JsonValue =
          typeof call.function.arguments === "string"
            ? jsonOrString(call.function.arguments)
            : call.function.arguments;
        return { type: "tool-call", id: call.id, name: call.function.name, input };
      });
      builder.add({ role: "assistant", content: [...content, ...calls] });
    } else if (message.role === "tool") {
      const callId = message.tool_call_id;
      if (!callId)
        throw new ParseError(
          source,
          undefined,
          expected,
          `${path}[${index}]: a tool message needs tool_call_id`,
        );
      const texts = content.map((block) => (block.type === "text" ? block.text : "")).join("\n");
      builder.add({
        role: "tool",
        content: [
          {
            type: "tool-result",
            callId,
            toolName: message.name ?? toolNames.get(callId) ?? "unknown",
            content: texts,
          },
        ],
      });
    } else if (message.role === "user") {
      builder.add({ role: "user", content });
    } else {
      builder.add({
        role: "system",
        content,
        ...(message.role === "system" ? {} : { metadata: { role: message.role } }),
      });
    }
  });
  return builder.build();
}

function contentBlocks(content: z.output<typeof openaiChatMessageSchema>["content"]): ContentBlock[] {
  if (content === null || content === undefined) return [];
  if (typeof content === "string") return [{ type: "text", text: content }];
  return content.flatMap((part): ContentBlock[] => {
    if (part.text !== undefined) return [{ type: "text", text: part.text }];
    if (part.image_url !== undefined) {
      return [imageBlock(typeof part.image_url === "string" ? part.image_url : part.image_url.url)];
    }
    return [];
  });
}
