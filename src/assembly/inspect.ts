import type { GovernanceEvent } from "../governance/events.ts";
import type { Message, Role } from "../model/message.ts";
import { currentInputStart, type Payload } from "./payload.ts";
import type { RenderedSection } from "./system-prompt.ts";

/** Tokens of a payload by channel: where the context window goes. */
export interface ChannelTokens {
  /** Each system-prompt section. */
  readonly system: readonly RenderedSection[];
  readonly summary: number;
  /** History messages (not tool outputs, not summaries, not the current input) by role. */
  readonly history: Readonly<Record<Exclude<Role, "system" | "tool">, number>>;
  readonly toolOutputs: number;
  readonly currentInput: number;
  readonly total: number;
}

/** What `inspect` reports about one request. */
export interface Inspection {
  readonly payload: Payload;
  readonly channels: ChannelTokens;
  readonly events: readonly GovernanceEvent[];
}

/**
 * Splits a payload's tokens into channels (system sections, summary, history by role, tool outputs, current
 * input) — the numbers behind `/context` and the inspector's stacked chart.
 *
 * @example
 * const { channels } = inspectPayload(payload, system.sections, governor.tokensOf, request.events);
 */
export function inspectPayload(
  payload: Payload,
  sections: readonly RenderedSection[],
  tokensOf: (message: Message) => number,
  events: readonly GovernanceEvent[] = [],
): Inspection {
  const inputStart = currentInputStart(payload.messages);
  let summary = 0;
  let toolOutputs = 0;
  let currentInput = 0;
  const history = { user: 0, assistant: 0 };
  payload.messages.forEach((message, index) => {
    const tokens = tokensOf(message);
    if (index >= inputStart) currentInput += tokens;
    else if (message.kind === "summary") summary += tokens;
    else if (message.role === "tool") toolOutputs += tokens;
    else if (message.role === "user" || message.role === "assistant") history[message.role] += tokens;
  });
  const systemTokens = sections.reduce((sum, section) => sum + section.tokens, 0);
  return {
    payload,
    channels: {
      system: sections,
      summary,
      history,
      toolOutputs,
      currentInput,
      total: systemTokens + summary + history.user + history.assistant + toolOutputs + currentInput,
    },
    events,
  };
}
