import type { ContentBlock, JsonValue, Message, Usage } from "../../model/message.ts";
import {
  codexItemSchemas,
  codexLineSchema,
  codexSessionMetaSchema,
  codexTokenCountSchema,
} from "./codex-records.ts";
import { codexContentBlocks, codexToolOutput } from "./codex-content.ts";
import type { ImportedConversation } from "./imported-conversation.ts";
import { definedEntries, jsonOrString } from "./json-or-string.ts";
import { parseJsonLines } from "./json-lines.ts";
import { MessageListBuilder, type MessageDraft } from "./message-list-builder.ts";
import { expectShape, type RecordLocation } from "./record-shape.ts";
import { sourceStem } from "./source-name.ts";

const expectedLine = "a Codex rollout line {timestamp, type, payload}";
const expectedItem = "a Codex response item";

/** The output items of one model request, merged into one assistant message. */
interface PendingResponse {
  readonly blocks: ContentBlock[];
  readonly createdAt: string | undefined;
  completedAt: string | undefined;
  usage: Usage | undefined;
  /** Results for server-side calls (web search) that the rollout never records. */
  readonly syntheticResults: MessageDraft[];
}

/**
 * Imports an OpenAI Codex CLI rollout JSONL file as one conversation, from its `response_item` records:
 * - `base_instructions` becomes the first `system` message (metadata `origin: "base_instructions"`);
 * - user messages that the user did not type (no matching `user_message` event: AGENTS.md, environment
 *   context) get metadata `meta: true`, as Claude Code's injected records do;
 * - `developer` messages become `system` messages with metadata `role: "developer"` (they are harness
 *   instructions, and a user message would open a turn);
 * - consecutive output items (reasoning, assistant text, function/custom tool calls, web searches) are one
 *   request's output and merge into one assistant message; the `token_count` event that follows carries that
 *   request's usage;
 * - encrypted reasoning is kept opaque in `providerData` with `redacted: true`;
 * - a `web_search_call` (run by the server, its result never logged) gets a synthetic empty result with
 *   metadata `synthetic: true`, so every call stays paired.
 *
 * @example
 * const [conversation] = importCodex(readFileSync(path, "utf8"), path);
 */
export function importCodex(text: string, source: string): ImportedConversation[] {
  const lines = parseJsonLines(text, source, expectedLine).map(({ line, value }) => ({
    line,
    record: expectShape(codexLineSchema, value, { source, line }, expectedLine),
  }));
  const metaLine = lines.find((entry) => entry.record.type === "session_meta");
  const meta = metaLine
    ? expectShape(
        codexSessionMetaSchema,
        metaLine.record.payload,
        { source, line: metaLine.line, path: "payload" },
        expectedLine,
      )
    : undefined;
  const prompts = new Set<string>();
  for (const { record } of lines) {
    const message = record.payload["message"];
    if (
      record.type === "event_msg" &&
      record.payload.type === "user_message" &&
      typeof message === "string"
    ) {
      prompts.add(message);
    }
  }
  const converter = new CodexConverter(meta?.id ?? sourceStem(source), prompts);
  if (meta?.base_instructions) {
    converter.addSystem(meta.base_instructions.text, metaLine?.record.timestamp, {
      origin: "base_instructions",
    });
  }
  for (const { line, record } of lines) {
    const location = { source, line, path: "payload" };
    if (record.type === "turn_context")
      converter.model = stringOf(record.payload["model"]) ?? converter.model;
    else if (record.type === "response_item") converter.addItem(record.payload, record.timestamp, location);
    else if (record.type === "event_msg" && record.payload.type === "token_count") {
      const event = expectShape(codexTokenCountSchema, record.payload, location, "a Codex token_count event");
      const usage = event.info?.last_token_usage;
      if (usage) {
        converter.addUsage(
          definedEntries({
            input: usage.input_tokens,
            output: usage.output_tokens,
            cacheRead: usage.cached_input_tokens,
            reasoning: usage.reasoning_output_tokens,
          }) as Usage,
        );
      }
    }
  }
  return [
    {
      id: converter.id,
      format: "codex",
      source,
      messages: converter.finish(),
      metadata: definedEntries({
        cwd: meta?.cwd,
        cliVersion: meta?.cli_version,
        originator: meta?.originator,
        modelProvider: meta?.model_provider,
      }),
    },
  ];
}

function textOf(blocks: readonly ContentBlock[]): string {
  return blocks.map((block) => (block.type === "text" ? block.text : "")).join("");
}

function stringOf(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

class CodexConverter {
  readonly id: string;
  /** The model of the current turn (from `turn_context`). */
  model: string | undefined;
  readonly #builder: MessageListBuilder;
  readonly #toolNames = new Map<string, string>();
  #pending: PendingResponse | undefined;
  #lastAssistant: Message | undefined;

  /** The prompts the user typed (`user_message` events); other user messages were injected by the harness. */
  readonly #prompts: ReadonlySet<string>;

  constructor(id: string, prompts: ReadonlySet<string>) {
    this.id = id;
    this.#builder = new MessageListBuilder(id);
    this.#prompts = prompts;
  }

  addSystem(text: string, createdAt: string | undefined, metadata: Record<string, string>): void {
    this.#flush();
    this.#builder.add({ role: "system", content: [{ type: "text", text }], createdAt, metadata });
  }

  addItem(
    payload: { type?: string | undefined },
    timestamp: string | undefined,
    location: RecordLocation,
  ): void {
    switch (payload.type) {
      case "message": {
        const message = expectShape(codexItemSchemas.message, payload, location, expectedItem);
        const blocks = message.content.flatMap(codexContentBlocks);
        if (message.role === "assistant") this.#output(timestamp).blocks.push(...blocks);
        else if (message.role === "user") {
          this.#flush();
          const typed = this.#prompts.size === 0 || this.#prompts.has(textOf(blocks));
          this.#builder.add({
            role: "user",
            content: blocks,
            createdAt: timestamp,
            ...(typed ? {} : { metadata: { meta: true } }),
          });
        } else {
          this.#flush();
          this.#builder.add({
            role: "system",
            content: blocks,
            createdAt: timestamp,
            metadata: { role: message.role },
          });
        }
        return;
      }
      case "reasoning": {
        const reasoning = expectShape(codexItemSchemas.reasoning, payload, location, expectedItem);
        const visible = [...(reasoning.summary ?? []), ...(reasoning.content ?? [])].map(
          (part) => part.text ?? "",
        );
        const providerData = definedEntries({
          id: reasoning.id,
          encrypted_content: reasoning.encrypted_content ?? undefined,
        });
        this.#output(timestamp).blocks.push({
          type: "reasoning",
          text: visible.join("\n\n"),
          ...(reasoning.encrypted_content && !reasoning.content?.length ? { redacted: true } : {}),
          ...(Object.keys(providerData).length > 0 ? { providerData } : {}),
        });
        return;
      }
      case "function_call": {
        const call = expectShape(codexItemSchemas.function_call, payload, location, expectedItem);
        this.#call(call.call_id, call.name, jsonOrString(call.arguments), timestamp);
        return;
      }
      case "custom_tool_call": {
        const call = expectShape(codexItemSchemas.custom_tool_call, payload, location, expectedItem);
        this.#call(call.call_id, call.name, call.input, timestamp);
        return;
      }
      case "web_search_call": {
        const search = expectShape(codexItemSchemas.web_search_call, payload, location, expectedItem);
        const callId = search.id ?? `web_search:${location.line}`;
        this.#call(callId, "web_search", search.action ?? {}, timestamp);
        this.#pending!.syntheticResults.push({
          role: "tool",
          content: [{ type: "tool-result", callId, toolName: "web_search", content: "" }],
          createdAt: timestamp,
          metadata: { synthetic: true },
        });
        return;
      }
      case "function_call_output":
      case "custom_tool_call_output": {
        const output = expectShape(codexItemSchemas.output, payload, location, expectedItem);
        this.#flush();
        this.#builder.add({
          role: "tool",
          content: [
            {
              type: "tool-result",
              callId: output.call_id,
              toolName: this.#toolNames.get(output.call_id) ?? "unknown",
              ...codexToolOutput(output.output),
            },
          ],
          createdAt: timestamp,
        });
        return;
      }
      default:
        // Other items (ghost snapshots, compaction bookkeeping) are not part of the model-visible history.
        return;
    }
  }

  /** Attaches a request's usage to its assistant message (the open one, else the latest one without usage). */
  addUsage(usage: Usage): void {
    if (this.#pending) {
      this.#pending.usage ??= usage;
      return;
    }
    if (this.#lastAssistant && this.#lastAssistant.usage === undefined) {
      this.#builder.update(this.#lastAssistant, { usage });
      this.#lastAssistant = { ...this.#lastAssistant, usage };
    }
  }

  finish(): Message[] {
    this.#flush();
    return this.#builder.build();
  }

  #call(id: string, name: string, input: JsonValue, timestamp: string | undefined): void {
    this.#toolNames.set(id, name);
    this.#output(timestamp).blocks.push({ type: "tool-call", id, name, input });
  }

  #output(timestamp: string | undefined): PendingResponse {
    this.#pending ??= {
      blocks: [],
      createdAt: timestamp,
      completedAt: timestamp,
      usage: undefined,
      syntheticResults: [],
    };
    this.#pending.completedAt = timestamp ?? this.#pending.completedAt;
    return this.#pending;
  }

  #flush(): void {
    const pending = this.#pending;
    if (!pending) return;
    this.#pending = undefined;
    this.#lastAssistant = this.#builder.add({
      role: "assistant",
      content: pending.blocks,
      createdAt: pending.createdAt,
      ...definedEntries({
        model: this.model,
        provider: "openai",
        usage: pending.usage,
        completedAt: pending.completedAt,
      }),
    });
    for (const draft of pending.syntheticResults) this.#builder.add(draft);
  }
}
