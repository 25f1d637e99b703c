import type { ContentBlock, Message, Usage } from "../../model/message.ts";
import { responseId, type ClaudeEntry } from "./claude-code-active-branch.ts";
import { convertAssistantBlocks, convertToolResult, convertUserBlocks } from "./claude-code-content.ts";
import type { ClaudeUsage } from "./claude-code-records.ts";
import { definedEntries } from "./json-or-string.ts";
import { MessageListBuilder, type MessageDraft } from "./message-list-builder.ts";

/** An assistant response being assembled from its lines, with the tool results that arrived meanwhile. */
interface PendingResponse {
  readonly id: string;
  readonly first: ClaudeEntry;
  last: ClaudeEntry;
  readonly blocks: ContentBlock[];
  readonly unsupported: string[];
  stopReason: string | undefined;
  readonly toolMessages: MessageDraft[];
}

/**
 * Turns active-branch records into messages in one pass. Lines of one response merge into one assistant
 * message (even when tool results were written between them); each `tool_result` becomes its own `tool`
 * message after it; a compact boundary becomes a `marker` and the summary after it a `summary`.
 *
 * @example
 * const converter = new ClaudeCodeConverter("session-1", "session.jsonl");
 * for (const entry of activeBranch(entries)) converter.add(entry);
 * const messages = converter.finish();
 */
export class ClaudeCodeConverter {
  readonly #builder: MessageListBuilder;
  readonly #source: string;
  readonly #toolNames = new Map<string, string>();
  #pending: PendingResponse | undefined;
  /** Seq of the first message the next compaction summarises. */
  #segmentStart = 0;
  #lastMarkerSeq = -1;

  constructor(id: string, source: string) {
    this.#builder = new MessageListBuilder(id);
    this.#source = source;
  }

  add(entry: ClaudeEntry): void {
    const { record } = entry;
    if (record.type === "assistant") this.#addAssistantLine(entry);
    else if (record.type === "user") this.#addUser(entry);
    else if (record.type === "system" && record.subtype === "compact_boundary") {
      this.#flush();
      const marker = this.#builder.add({
        role: "system",
        kind: "marker",
        content: [
          {
            type: "text",
            text: typeof record.content === "string" ? record.content : "Conversation compacted",
          },
        ],
        createdAt: record.timestamp,
        metadata: definedEntries({
          subtype: "compact_boundary",
          trigger: record.compactMetadata?.trigger,
          preTokens: record.compactMetadata?.preTokens,
        }),
      });
      this.#lastMarkerSeq = marker.seq;
    }
  }

  finish(): Message[] {
    this.#flush();
    return this.#builder.build();
  }

  #addAssistantLine(entry: ClaudeEntry): void {
    const id = responseId(entry);
    if (this.#pending?.id !== id) {
      this.#flush();
      this.#pending = {
        id,
        first: entry,
        last: entry,
        blocks: [],
        unsupported: [],
        stopReason: undefined,
        toolMessages: [],
      };
    }
    const pending = this.#pending;
    pending.last = entry;
    const content = entry.message!.content;
    const converted = convertAssistantBlocks(
      typeof content === "string" ? [{ type: "text", text: content }] : content,
      { source: this.#source, line: entry.line },
    );
    for (const block of converted.blocks) {
      if (block.type === "tool-call") this.#toolNames.set(block.id, block.name);
      pending.blocks.push(block);
    }
    pending.unsupported.push(...converted.unsupported);
    pending.stopReason = entry.message!.stop_reason ?? pending.stopReason;
  }

  #addUser(entry: ClaudeEntry): void {
    const { record } = entry;
    const content = entry.message!.content;
    const location = { source: this.#source, line: entry.line };
    const raw = typeof content === "string" ? [] : content;
    const toolMessages: MessageDraft[] = raw
      .filter((block) => block.type === "tool_result")
      .map((block) => {
        const result = convertToolResult(block, "", location);
        const toolName = this.#toolNames.get(result.callId) ?? "unknown";
        return { role: "tool", content: [{ ...result, toolName }], createdAt: record.timestamp };
      });
    if (this.#pending) this.#pending.toolMessages.push(...toolMessages);
    else for (const draft of toolMessages) this.#builder.add(draft);
    const converted =
      typeof content === "string"
        ? { blocks: [{ type: "text" as const, text: content }], unsupported: [] }
        : convertUserBlocks(raw, location);
    if (typeof content !== "string" && converted.blocks.length === 0) return;
    this.#flush();
    const previous = this.#builder.length - 1;
    const summaryOf =
      record.isCompactSummary === true && previous === this.#lastMarkerSeq && previous > this.#segmentStart
        ? { fromSeq: this.#segmentStart, toSeq: previous - 1, messageCount: previous - this.#segmentStart }
        : undefined;
    const message = this.#builder.add({
      role: "user",
      content: converted.blocks,
      createdAt: record.timestamp,
      ...(record.isCompactSummary === true ? { kind: "summary" as const } : {}),
      ...(summaryOf ? { summaryOf } : {}),
      ...metadataOf({
        meta: record.isMeta === true ? true : undefined,
        unsupportedBlocks: converted.unsupported,
      }),
    });
    if (record.isCompactSummary === true) this.#segmentStart = message.seq;
  }

  #flush(): void {
    const pending = this.#pending;
    if (!pending) return;
    this.#pending = undefined;
    const message = pending.last.message!;
    // Claude Code writes some replies itself (model "<synthetic>": "No response requested."): no request was
    // made or billed, so they carry no usage.
    const synthetic = message.model === "<synthetic>";
    const usage = message.usage && !synthetic ? usageOf(message.usage) : undefined;
    const record = pending.first.record;
    this.#builder.add({
      role: "assistant",
      content: pending.blocks,
      createdAt: record.timestamp,
      ...definedEntries({
        model: message.model,
        provider: "anthropic",
        usage,
        finishReason: pending.stopReason,
        error: record.isApiErrorMessage === true ? textOf(pending.blocks) : undefined,
        completedAt: pending.last.record.timestamp,
      }),
      ...metadataOf({ synthetic: synthetic || undefined, unsupportedBlocks: pending.unsupported }),
    });
    for (const draft of pending.toolMessages) this.#builder.add(draft);
  }
}

function metadataOf(fields: {
  meta?: true | undefined;
  synthetic?: true | undefined;
  unsupportedBlocks: readonly string[];
}) {
  const metadata = definedEntries({
    meta: fields.meta,
    synthetic: fields.synthetic,
    unsupportedBlocks:
      fields.unsupportedBlocks.length > 0 ? [...new Set(fields.unsupportedBlocks)] : undefined,
  });
  return Object.keys(metadata).length > 0 ? { metadata } : {};
}

function textOf(blocks: readonly ContentBlock[]): string {
  return blocks.map((block) => (block.type === "text" ? block.text : "")).join("");
}

/** Anthropic usage as ctxkit `Usage`: `input` counts every prompt token, cached ones included. */
function usageOf(usage: ClaudeUsage): Usage | undefined {
  if (usage.input_tokens === undefined && usage.output_tokens === undefined) return undefined;
  const cacheRead = usage.cache_read_input_tokens ?? undefined;
  const cacheWrite = usage.cache_creation_input_tokens ?? undefined;
  const longWrite = usage.cache_creation?.ephemeral_1h_input_tokens ?? 0;
  return definedEntries({
    input: (usage.input_tokens ?? 0) + (cacheRead ?? 0) + (cacheWrite ?? 0),
    output: usage.output_tokens ?? 0,
    cacheRead,
    cacheWrite,
    cacheWriteLong: longWrite > 0 ? longWrite : undefined,
  }) as Usage;
}
