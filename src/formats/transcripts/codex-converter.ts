import type { ContentBlock, JsonValue, Message, Usage } from "../../model/message.ts";
import { codexContentBlocks, codexToolOutput } from "./codex-content.ts";
import { codexItemSchemas } from "./codex-records.ts";
import { definedEntries } from "./json-or-string.ts";
import { functionCallBlock } from "../providers/function-arguments.ts";
import { MessageListBuilder, type MessageDraft } from "./message-list-builder.ts";
import { expectShape, type RecordLocation } from "./record-shape.ts";

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

function textOf(blocks: readonly ContentBlock[]): string {
  return blocks.map((block) => (block.type === "text" ? block.text : "")).join("");
}

/**
 * Builds a Codex conversation from response items in file order: merges each request's output items into one
 * assistant message and attaches `token_count` usage to it (see `importCodex`).
 *
 * @example
 * const converter = new CodexConverter("rollout-1", new Set(["list files"]));
 * converter.addItem(payload, timestamp, { source, line });
 * converter.finish();
 */
export class CodexConverter {
  readonly id: string;
  /** The model of the current turn (from `turn_context`). */
  model: string | undefined;
  readonly #builder: MessageListBuilder;
  readonly #toolNames = new Map<string, string>();
  #pending: PendingResponse | undefined;
  #lastAssistant: Message | undefined;
  /** Seq of the first message the next compaction summarises. */
  #segmentStart = 0;

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
        // In the shape the Responses importer gives (the AI SDK's `providerData.openai`): what the Responses
        // exporter sends back, encrypted content included.
        const openai = definedEntries({
          itemId: reasoning.id,
          reasoningEncryptedContent: reasoning.encrypted_content ?? undefined,
        });
        this.#output(timestamp).blocks.push({
          type: "reasoning",
          text: visible.join("\n\n"),
          ...(reasoning.encrypted_content && !reasoning.content?.length ? { redacted: true } : {}),
          ...(Object.keys(openai).length > 0 ? { providerData: { openai } } : {}),
        });
        return;
      }
      case "function_call": {
        const call = expectShape(codexItemSchemas.function_call, payload, location, expectedItem);
        const { input, unparsed } = functionCallBlock(call.call_id, call.name, call.arguments);
        this.#call(call.call_id, call.name, input, timestamp, unparsed);
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
        this.#result(output.call_id, output.output, timestamp);
        return;
      }
      default: {
        const type = payload.type ?? "";
        if (!("call_id" in payload)) return;
        if (type.endsWith("_call")) this.#otherCall(type, payload, timestamp, location);
        else if (type.endsWith("_output")) this.#otherOutput(payload, timestamp, location);
        // Other items (ghost snapshots, compaction bookkeeping) are not part of the model-visible history.
        return;
      }
    }
  }

  /**
   * A compaction: Codex replaced the history with `summary` (the handoff summary it wrote; empty when the
   * server compacted and kept it encrypted). A marker, then the summary as a `summary` user message that names
   * the range it stands for; the replacement history itself repeats earlier items and is not imported again.
   */
  addCompaction(summary: string, createdAt: string | undefined): void {
    this.#flush();
    const marker = this.#builder.add({
      role: "system",
      kind: "marker",
      content: [{ type: "text", text: "Conversation compacted" }],
      createdAt,
      metadata: { subtype: "compacted" },
    });
    if (summary.trim() === "") return;
    const summaryOf =
      marker.seq > this.#segmentStart
        ? {
            fromSeq: this.#segmentStart,
            toSeq: marker.seq - 1,
            messageCount: marker.seq - this.#segmentStart,
          }
        : undefined;
    const message = this.#builder.add({
      role: "user",
      kind: "summary",
      content: [{ type: "text", text: summary }],
      createdAt,
      ...(summaryOf ? { summaryOf } : {}),
    });
    this.#segmentStart = message.seq;
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

  /** A client-run call of a kind without its own case (`tool_search_call`): named after its type. */
  #otherCall(type: string, payload: object, timestamp: string | undefined, location: RecordLocation): void {
    const call = expectShape(codexItemSchemas.otherCall, payload, location, expectedItem);
    const name = call.name ?? type.slice(0, -"_call".length);
    const input = call.arguments ?? call.input ?? call.action ?? {};
    if (typeof input !== "string") return this.#call(call.call_id, name, input, timestamp);
    const parsed = functionCallBlock(call.call_id, name, input);
    this.#call(call.call_id, name, parsed.input, timestamp, parsed.unparsed);
  }

  /** Its output: the `output` field when there is one, else every field but the envelope (the loaded `tools`). */
  #otherOutput(payload: object, timestamp: string | undefined, location: RecordLocation): void {
    const item = expectShape(codexItemSchemas.otherOutput, payload, location, expectedItem);
    const { type: _type, call_id: callId, status: _status, execution: _execution, ...rest } = item;
    this.#result(callId, "output" in rest ? (rest["output"] as JsonValue) : (rest as JsonValue), timestamp);
  }

  #result(
    callId: string,
    output: Parameters<typeof codexToolOutput>[0],
    timestamp: string | undefined,
  ): void {
    this.#flush();
    this.#builder.add({
      role: "tool",
      content: [
        {
          type: "tool-result",
          callId,
          toolName: this.#toolNames.get(callId) ?? "unknown",
          ...codexToolOutput(output),
        },
      ],
      createdAt: timestamp,
    });
  }

  #call(id: string, name: string, input: JsonValue, timestamp: string | undefined, unparsed?: true): void {
    this.#toolNames.set(id, name);
    this.#output(timestamp).blocks.push({
      type: "tool-call",
      id,
      name,
      input,
      ...(unparsed && { unparsed }),
    });
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
