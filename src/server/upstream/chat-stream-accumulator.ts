import { replyBlocks, usageOf, type AssistantReply, type ToolCallDraft } from "./assistant-reply.ts";

type JsonRecord = Record<string, unknown>;
const asRecord = (value: unknown): JsonRecord | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonRecord) : undefined;

/** What one streamed chunk added, for callers that relay deltas. */
export interface ChunkDelta {
  readonly text: string;
  readonly reasoning: string;
  /** True for the usage-only chunk (`choices: []` with `usage`). */
  readonly usageOnly: boolean;
  /** The chunk's `error` object, when the upstream reported a failure inside the stream. */
  readonly error: unknown;
}

/**
 * Rebuilds the assistant message of a streamed chat completion (choice 0) from its chunks: text, refusal,
 * reasoning (`reasoning_content` or `reasoning`), tool calls assembled by index, finish reason, model and usage.
 *
 * @example
 * const accumulator = new ChatStreamAccumulator();
 * for (const data of chunks) accumulator.add(JSON.parse(data));
 * await session.recordAssistant(accumulator.reply());
 */
export class ChatStreamAccumulator {
  #text = "";
  #refusal = "";
  #reasoning = "";
  readonly #calls = new Map<number, ToolCallDraft>();
  #finishReason: string | undefined;
  #model: string | undefined;
  #usage: unknown;
  #chunks = 0;

  /** How many chunks were added. */
  get chunks(): number {
    return this.#chunks;
  }

  /** The finish reason of choice 0, once the upstream gave it. */
  get finishReason(): string | undefined {
    return this.#finishReason;
  }

  /** Adds one parsed chunk and returns what it contributed. */
  add(chunk: unknown): ChunkDelta {
    this.#chunks++;
    const body = asRecord(chunk) ?? {};
    if (typeof body["model"] === "string") this.#model = body["model"];
    if (body["usage"] !== undefined && body["usage"] !== null) this.#usage = body["usage"];
    const choices = Array.isArray(body["choices"]) ? (body["choices"] as unknown[]) : [];
    const choice = choices.map(asRecord).find((entry) => (entry?.["index"] ?? 0) === 0);
    const delta = asRecord(choice?.["delta"]) ?? {};
    const text = typeof delta["content"] === "string" ? delta["content"] : "";
    const reasoningField = delta["reasoning_content"] ?? delta["reasoning"];
    const reasoning = typeof reasoningField === "string" ? reasoningField : "";
    this.#text += text;
    if (typeof delta["refusal"] === "string") this.#refusal += delta["refusal"];
    this.#reasoning += reasoning;
    const calls = Array.isArray(delta["tool_calls"]) ? (delta["tool_calls"] as unknown[]) : [];
    for (const entry of calls) this.#addCall(asRecord(entry) ?? {});
    if (typeof choice?.["finish_reason"] === "string") this.#finishReason = choice["finish_reason"];
    return {
      text,
      reasoning,
      usageOnly: choices.length === 0 && body["usage"] !== undefined && body["usage"] !== null,
      error: body["error"],
    };
  }

  #addCall(entry: JsonRecord): void {
    const index = typeof entry["index"] === "number" ? entry["index"] : this.#calls.size;
    const draft = this.#calls.get(index) ?? { id: "", name: "", arguments: "", custom: false };
    if (typeof entry["id"] === "string" && entry["id"] !== "") draft.id = entry["id"];
    const fn = asRecord(entry["function"]);
    const custom = asRecord(entry["custom"]);
    if (custom !== undefined) draft.custom = true;
    const part = custom ?? fn ?? {};
    // The name arrives whole in the call's first chunk; later chunks may repeat it.
    if (typeof part["name"] === "string" && draft.name === "") draft.name = part["name"];
    const piece = custom !== undefined ? custom["input"] : fn?.["arguments"];
    if (typeof piece === "string") draft.arguments += piece;
    this.#calls.set(index, draft);
  }

  /** The reply so far (call it once the stream ended). */
  reply(): AssistantReply {
    const calls = [...this.#calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
    return {
      content: replyBlocks(this.#reasoning, this.#text, calls, this.#refusal),
      usage: usageOf(this.#usage),
      finishReason: this.#finishReason,
      model: this.#model,
    };
  }
}
