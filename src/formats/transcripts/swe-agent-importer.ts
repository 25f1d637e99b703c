import { z } from "zod";
import { ParseError } from "../../errors/errors.ts";
import type { ContentBlock } from "../../model/message.ts";
import type { ImportedConversation } from "./imported-conversation.ts";
import { definedEntries, jsonOrString } from "./json-or-string.ts";
import { parseJsonDocument } from "./json-lines.ts";
import { MessageListBuilder } from "./message-list-builder.ts";
import { openaiChatMessageSchema } from "./openai-chat-importer.ts";
import { expectShape } from "./record-shape.ts";
import { sourceStem } from "./source-name.ts";

const expected = "a SWE-agent trajectory {history:[{role, content, …}], info}";

const entrySchema = openaiChatMessageSchema.extend({
  action: z.string().nullish(),
  is_demo: z.boolean().optional(),
  tool_call_ids: z.array(z.string().min(1)).nullish(),
});

const trajectorySchema = z.looseObject({
  environment: z.string().optional(),
  history: z.array(z.unknown()),
  info: z.looseObject({ exit_status: z.string().nullish() }).optional(),
});

/**
 * The pseudo-tool that text-action runs call: the action is a shell command line.
 *
 * @example
 * const actions = toolCallsOf(message).filter((call) => call.name === SWE_AGENT_ACTION_TOOL);
 */
export const SWE_AGENT_ACTION_TOOL = "bash";

/**
 * Imports a SWE-agent `.traj` file from its `history` (the chat sent to the model), one conversation named
 * after the file.
 * - Function-calling runs are OpenAI-shaped: `tool_calls`, then `tool` messages answering `tool_call_ids`.
 * - Text-action runs (no `tool_calls`): an assistant message whose `action` is answered by the next user
 *   message becomes a call to the pseudo-tool `bash` with input `{command: action}`, and that user message
 *   (the observation) its result. The text stays in the assistant message too, as the model wrote it. User
 *   messages before any action are the instructions (demonstrations are marked `demo: true`). A final action
 *   with no observation in the history (the closing `submit`) stays text, with `action` in its metadata.
 *
 * @example
 * const [run] = importSweAgent(readFileSync(path, "utf8"), path);
 */
export function importSweAgent(text: string, source: string): ImportedConversation[] {
  const trajectory = expectShape(
    trajectorySchema,
    parseJsonDocument(text, source, expected),
    { source },
    expected,
  );
  const id = sourceStem(source);
  const entries = trajectory.history.map((value, index) =>
    expectShape(entrySchema, value, { source, path: `history[${index}]` }, expected),
  );
  const functionCalling = entries.some(
    (entry) => entry.role === "tool" || (entry.tool_calls?.length ?? 0) > 0,
  );
  const builder = new MessageListBuilder(id);
  const toolNames = new Map<string, string>();
  let awaitingObservation: string | undefined;
  entries.forEach((entry, index) => {
    const text = textOf(entry.content);
    const textBlocks: ContentBlock[] = text === "" ? [] : [{ type: "text", text }];
    if (entry.role === "assistant") {
      const calls: ContentBlock[] = (entry.tool_calls ?? []).map((call) => {
        toolNames.set(call.id, call.function.name);
        const input =
          typeof call.function.arguments === "string"
            ? jsonOrString(call.function.arguments)
            : call.function.arguments;
        return { type: "tool-call", id: call.id, name: call.function.name, input };
      });
      const action = entry.action?.trim() ? entry.action : undefined;
      const answered = entries[index + 1]?.role === "user";
      if (!functionCalling && action !== undefined && answered) {
        awaitingObservation = `action-${index}`;
        calls.push({
          type: "tool-call",
          id: awaitingObservation,
          name: SWE_AGENT_ACTION_TOOL,
          input: { command: action },
        });
      }
      const unanswered = !functionCalling && action !== undefined && !answered;
      builder.add({
        role: "assistant",
        content: [...textBlocks, ...calls],
        ...(unanswered ? { metadata: { action } } : {}),
      });
    } else if (entry.role === "tool") {
      const callIds = entry.tool_call_ids ?? (entry.tool_call_id ? [entry.tool_call_id] : []);
      if (callIds.length === 0)
        throw new ParseError(
          source,
          undefined,
          expected,
          `history[${index}]: a tool message needs tool_call_ids`,
        );
      for (const callId of callIds) {
        builder.add({
          role: "tool",
          content: [
            { type: "tool-result", callId, toolName: toolNames.get(callId) ?? "unknown", content: text },
          ],
        });
      }
    } else if (entry.role === "user" && awaitingObservation !== undefined) {
      builder.add({
        role: "tool",
        content: [
          {
            type: "tool-result",
            callId: awaitingObservation,
            toolName: SWE_AGENT_ACTION_TOOL,
            content: text,
          },
        ],
      });
      awaitingObservation = undefined;
    } else {
      const role = entry.role === "user" ? "user" : "system";
      builder.add({
        role,
        content: textBlocks,
        ...(entry.is_demo === true ? { metadata: { demo: true } } : {}),
      });
    }
  });
  return [
    {
      id,
      format: "swe-agent",
      source,
      messages: builder.build(),
      metadata: definedEntries({
        environment: trajectory.environment,
        exitStatus: trajectory.info?.exit_status ?? undefined,
      }),
    },
  ];
}

function textOf(content: z.output<typeof entrySchema>["content"]): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  return content.map((part) => part.text ?? "").join("\n");
}
