import type { EngineSettings } from "../../engine/engine-settings.ts";
import type { ToolDefinition } from "../../engine/prepared-request.ts";
import { toOpenAIChat, type OpenAIChatMessage } from "../../formats/providers/openai-chat/index.ts";
import type { GovernanceEvent } from "../../governance/events.ts";
import { createGovernor, type RequestTokens } from "../../governance/governor.ts";
import type { Message } from "../../model/message.ts";
import { messageTokensAsync, textTokensAsync } from "../../tokens/token-counter.ts";

/** A stateless client's message list after governance. */
export interface StatelessGoverned {
  readonly messages: OpenAIChatMessage[];
  readonly tokens: RequestTokens;
  readonly events: readonly GovernanceEvent[];
  readonly checkpoint: boolean;
}

/**
 * Governs a full message list sent by a stateless client with a fresh governor using the engine's settings
 * (window, counter, summarizer, policy). System and developer messages are kept, first, and count as fixed
 * tokens with the tool definitions. Nothing is stored; offloaded outputs are kept in memory for this request.
 *
 * @example
 * const governed = await governStateless(fromOpenAIChat(body.messages), engine.settings, tools);
 */
export async function governStateless(
  messages: readonly Message[],
  settings: EngineSettings,
  tools: readonly ToolDefinition[],
  onEvent?: (event: GovernanceEvent) => void,
): Promise<StatelessGoverned> {
  const events: GovernanceEvent[] = [];
  const governor = createGovernor({
    contextWindow: settings.contextWindow,
    reservedOutputTokens: settings.reservedOutputTokens,
    counter: settings.counter,
    summarizer: settings.summarizer,
    policy: settings.policy,
    ids: settings.ids,
    clock: settings.clock,
    onEvent: (event) => {
      events.push(event);
      onEvent?.(event);
    },
  });
  const system = messages.filter((message) => message.role === "system");
  const history = messages.filter((message) => message.role !== "system");
  // Counted asynchronously: a request's system prompt or tool definitions can be megabytes.
  let fixedTokens = tools.length > 0 ? await textTokensAsync(JSON.stringify(tools), settings.counter) : 0;
  for (const message of system) fixedTokens += await messageTokensAsync(message, settings.counter);
  const governed = await governor.prepare(history, { fixedTokens });
  return {
    messages: toOpenAIChat([...system, ...governed.messages]),
    tokens: governed.tokens,
    events,
    checkpoint: governed.checkpoint,
  };
}
