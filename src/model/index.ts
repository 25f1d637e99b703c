/**
 * `ctxkit/model`: the message model — message and block types, their zod schemas, block helpers, turns, tool
 * pairing and id generators.
 */
export * from "./message.ts";
export {
  isBinaryBlock,
  isInstruction,
  messageText,
  opaqueBlockLabel,
  text,
  toolCallsOf,
  toolResultsOf,
  toolResultText,
} from "./blocks.ts";
export * from "./turns.ts";
export { pairToolCalls, type Step, type ToolPair } from "./tool-pairing.ts";
export * from "./ids.ts";
export * from "./schemas.ts";
