import type { Channels } from "./types.ts";

/** The channels of the stacked chart, bottom to top, with their CSS class. */
export const CHANNELS = [
  { key: "system", label: "System prompt & tools", className: "ch-system" },
  { key: "summary", label: "Summary", className: "ch-summary" },
  { key: "history", label: "History", className: "ch-history" },
  { key: "toolOutputs", label: "Tool outputs", className: "ch-tools" },
  { key: "currentInput", label: "Current input", className: "ch-input" },
] as const;

/** A chart channel's key. */
export type ChannelKey = (typeof CHANNELS)[number]["key"];

/**
 * The tokens of one chart channel of a payload.
 *
 * @example
 * channelTokens(request.governed, "history");
 */
export function channelTokens(channels: Channels, key: ChannelKey): number {
  switch (key) {
    case "system":
      return channels.system.reduce((sum, section) => sum + section.tokens, 0);
    case "summary":
      return channels.summary;
    case "history":
      return channels.history.user + channels.history.assistant;
    case "toolOutputs":
      return channels.toolOutputs;
    case "currentInput":
      return channels.currentInput;
  }
}
