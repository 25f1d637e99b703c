import type { ChannelTokens } from "../../assembly/inspect.ts";
import type { SessionStats } from "../../engine/engine-session.ts";
import type { JsonValue } from "../../model/message.ts";

/** `/context` as text and as JSON. */
export interface ContextReport {
  readonly text: string;
  readonly data: JsonValue;
}

const number = (value: number) => Math.round(value).toLocaleString("en-US");

function channelData(channels: ChannelTokens): JsonValue {
  return {
    system: channels.system.reduce((sum, section) => sum + section.tokens, 0),
    summary: channels.summary,
    user: channels.history.user,
    assistant: channels.history.assistant,
    toolOutputs: channels.toolOutputs,
    currentInput: channels.currentInput,
    total: channels.total,
  };
}

/**
 * The `/context` report: message count, role distribution, characters, tokens by channel (from the last
 * request the session prepared) and window use.
 *
 * @example
 * const report = contextReport(await session.stats(), request?.inspection.channels);
 * console.log(report.text);
 */
export function contextReport(stats: SessionStats, channels: ChannelTokens | undefined): ContextReport {
  const { roles } = stats;
  const byChannel = channels === undefined ? null : channelData(channels);
  const lines = [
    `session     ${stats.sessionId}${stats.stored?.title === undefined ? "" : ` · ${stats.stored.title}`}`,
    `messages    ${number(stats.messages)} (user ${roles.user}, assistant ${roles.assistant}, tool ${roles.tool}, system ${roles.system})`,
    `characters  ${number(stats.characters)}`,
    `tokens      ${number(stats.tokens)} of ${number(stats.usable)} usable (${(stats.windowUse * 100).toFixed(1)}%) · window ${number(stats.contextWindow)}`,
  ];
  if (byChannel !== null && channels !== undefined) {
    const system = channels.system.reduce((sum, section) => sum + section.tokens, 0);
    lines.push(
      `by channel  system ${number(system)} · summary ${number(channels.summary)} · user ${number(channels.history.user)} · ` +
        `assistant ${number(channels.history.assistant)} · tool outputs ${number(channels.toolOutputs)} · ` +
        `current input ${number(channels.currentInput)}`,
    );
  } else {
    lines.push("by channel  (after the first request)");
  }
  return {
    text: lines.join("\n"),
    data: {
      sessionId: stats.sessionId,
      messages: stats.messages,
      roles: { ...roles },
      characters: stats.characters,
      tokens: stats.tokens,
      usable: stats.usable,
      contextWindow: stats.contextWindow,
      windowUse: stats.windowUse,
      channels: byChannel,
    },
  };
}
