import type { EngineSettings } from "../../engine/engine-settings.ts";
import type { ToolDefinition } from "../../engine/prepared-request.ts";
import { toOpenAIChat, type OpenAIChatMessage } from "../../formats/providers/openai-chat/index.ts";
import type { GovernanceEvent } from "../../governance/events.ts";
import type { RequestTokens } from "../../governance/governor.ts";
import type { Message } from "../../model/message.ts";
import { messageTokensAsync, textTokensAsync } from "../../tokens/token-counter.ts";
import type { StatelessGovernance, StatelessResult } from "./stateless-governance.ts";

/** A stateless client's message list after governance. */
export interface StatelessGoverned {
  readonly messages: OpenAIChatMessage[];
  /**
   * The same list as ctxkit messages: the client's own message where governance left one unchanged (its
   * provider fields and opaque blocks intact), governance's where it rewrote one. For formats richer than chat.
   */
  readonly view: Message[];
  readonly tokens: RequestTokens;
  readonly events: readonly GovernanceEvent[];
  readonly checkpoint: boolean;
  readonly continued: StatelessResult["continued"];
}

/**
 * The chat messages of a governed view. With the client's own messages (`client`, which `messages` were imported
 * from one for one), the system messages and every message governance left unchanged are sent as the client
 * sent them, byte for byte (`cache_control` on parts, `name`, Mistral's `prefix`, any field ctxkit does not
 * model); only rewritten messages (summaries, truncated or offloaded outputs, a notice) are converted. Without
 * them, or when the import folded messages together (tool attachments), everything is converted.
 */
function chatMessages(
  system: readonly Message[],
  governed: StatelessResult,
  messages: readonly Message[],
  client: readonly unknown[] | undefined,
): OpenAIChatMessage[] {
  if (client === undefined || client.length !== messages.length)
    return toOpenAIChat([...system, ...governed.messages]);
  const asSent = (index: number) => client[index] as OpenAIChatMessage;
  const historyAt: number[] = [];
  const result: OpenAIChatMessage[] = [];
  messages.forEach((message, index) => {
    if (message.role === "system") result.push(asSent(index));
    else historyAt.push(index);
  });
  let rewritten: Message[] = [];
  const flush = () => {
    if (rewritten.length > 0) result.push(...toOpenAIChat(rewritten));
    rewritten = [];
  };
  governed.messages.forEach((message, index) => {
    const source = governed.sources[index];
    const at = source === undefined ? undefined : historyAt[source];
    if (at === undefined) {
      rewritten.push(message);
      return;
    }
    flush();
    result.push(asSent(at));
  });
  flush();
  return result;
}

/**
 * Governs a full message list sent by a stateless client through `governance` (which continues the
 * conversation's governor from its previous request), with the engine's settings (window, counter, summarizer,
 * policy). System and developer messages are kept, first, and count as fixed tokens with the tool definitions.
 * Nothing is stored; offloaded outputs are kept in memory for this request. Given the client's chat messages
 * that `messages` were imported from (`client`), the ones governance left alone go upstream as they came.
 *
 * @example
 * const governed = await governStateless(governance, `${tenant} chat`, fromOpenAIChat(body.messages), engine.settings, tools, undefined, body.messages);
 */
export async function governStateless(
  governance: StatelessGovernance,
  scope: string,
  messages: readonly Message[],
  settings: EngineSettings,
  tools: readonly ToolDefinition[],
  onEvent?: (event: GovernanceEvent) => void,
  client?: readonly unknown[],
): Promise<StatelessGoverned> {
  const system = messages.filter((message) => message.role === "system");
  const history = messages.filter((message) => message.role !== "system");
  // Counted asynchronously: a request's system prompt or tool definitions can be megabytes.
  let fixedTokens = tools.length > 0 ? await textTokensAsync(JSON.stringify(tools), settings.counter) : 0;
  for (const message of system) fixedTokens += await messageTokensAsync(message, settings.counter);
  const fixed = JSON.stringify([system.map((message) => message.content), tools]);
  const governed = await governance.govern({ scope, fixed, fixedTokens, history }, settings, onEvent);
  const view = [
    ...system,
    ...governed.messages.map((message, index) => {
      const source = governed.sources[index];
      return source === undefined ? message : history[source]!;
    }),
  ];
  return {
    messages: chatMessages(system, governed, messages, client),
    view,
    tokens: governed.tokens,
    events: governed.events,
    checkpoint: governed.checkpoint,
    continued: governed.continued,
  };
}
