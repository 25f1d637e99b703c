import type { Inspection } from "../assembly/inspect.ts";
import type { Payload } from "../assembly/payload.ts";
import type { GovernanceEvent } from "../governance/events.ts";
import type { RequestTokens } from "../governance/governor.ts";
import type { LoopDetection } from "../governance/loop-detector.ts";
import { toAnthropic } from "../formats/providers/anthropic/index.ts";
import { toGemini } from "../formats/providers/gemini/index.ts";
import { toOpenAIChat } from "../formats/providers/openai-chat/index.ts";
import type { JsonValue } from "../model/message.ts";

/** A tool the model may call: name, description and JSON-schema input, as every provider takes them. */
export interface ToolDefinition {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema?: JsonValue;
}

/**
 * A governed, assembled request, provider-neutral, with converters to each provider's format and the
 * inspection report (tokens per channel, governance events).
 */
export class PreparedRequest {
  readonly payload: Payload;
  readonly tools: readonly ToolDefinition[];
  readonly tokens: RequestTokens;
  readonly events: readonly GovernanceEvent[];
  readonly inspection: Inspection;
  /** True when this request rewrote earlier history (a compaction or a truncation/offload batch). */
  readonly checkpoint: boolean;
  readonly loop: LoopDetection | undefined;

  /** @internal Created by `EngineSession.prepare()`. */
  constructor(fields: {
    payload: Payload;
    tools: readonly ToolDefinition[];
    tokens: RequestTokens;
    events: readonly GovernanceEvent[];
    inspection: Inspection;
    checkpoint: boolean;
    loop: LoopDetection | undefined;
  }) {
    this.payload = fields.payload;
    this.tools = fields.tools;
    this.tokens = fields.tokens;
    this.events = fields.events;
    this.inspection = fields.inspection;
    this.checkpoint = fields.checkpoint;
    this.loop = fields.loop;
  }

  /** The system prompt. */
  get system(): string {
    return this.payload.system;
  }

  /** The governed messages, in order (no system message: see `system`). */
  get messages(): Payload["messages"] {
    return this.payload.messages;
  }

  /** OpenAI Chat Completions `messages`, system prompt first. */
  toOpenAIChat(): ReturnType<typeof toOpenAIChat> {
    return toOpenAIChat(this.#withSystem());
  }

  /** Anthropic Messages `{ system, messages }`. */
  toAnthropic(): ReturnType<typeof toAnthropic> {
    return toAnthropic(this.#withSystem());
  }

  /** Gemini `{ systemInstruction, contents }`. */
  toGemini(): ReturnType<typeof toGemini> {
    return toGemini(this.#withSystem());
  }

  #withSystem(): Payload["messages"] {
    if (this.payload.system === "") return this.payload.messages;
    const first = this.payload.messages[0];
    return [
      {
        id: "system",
        sessionId: first?.sessionId ?? "",
        seq: -1,
        turn: 0,
        role: "system",
        content: [{ type: "text", text: this.payload.system }],
        createdAt: first?.createdAt ?? new Date(0).toISOString(),
      },
      ...this.payload.messages,
    ];
  }
}
