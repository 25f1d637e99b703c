import type { ContentBlock, Message } from "../model/message.ts";
import { toolResultText } from "../model/blocks.ts";
import { currentTurnStart, groupTurns, opensTurn } from "../model/turns.ts";
import { leadingSystemEnd } from "./compaction-plan.ts";
import type { ProcessorContext } from "./processor.ts";
import { withContent } from "./rewrite.ts";
import { trimmedMarker } from "../summarize/summarize-request-schema.ts";
import { summarizeSafely } from "./summarize-safely.ts";

const EMERGENCY_CHARS = 10_000;
const EMERGENCY_TURNS = 5;

function clip(text: string): string {
  return text.length <= EMERGENCY_CHARS
    ? text
    : `${text.slice(0, EMERGENCY_CHARS)}\n[… clipped after an overflow error …]`;
}

function clipMessage(message: Message): Message {
  let changed = false;
  const content = message.content.map((block): ContentBlock => {
    if (block.type === "tool-result") {
      const text = toolResultText(block.content);
      if (text.length <= EMERGENCY_CHARS) return block;
      changed = true;
      return { ...block, content: clip(text) };
    }
    if (block.type === "text" && message.role === "user" && block.text.length > EMERGENCY_CHARS) {
      changed = true;
      return { ...block, text: clip(block.text) };
    }
    return block;
  });
  return changed ? withContent(message, content) : message;
}

/**
 * The view after a provider overflow error. `trimmed`: everything is summarised to the memory sink, then only
 * the last 5 turns are kept with tool results and user texts clipped to 10k characters. `cleared`: only the
 * current instruction remains. The leading system messages are kept in both.
 */
export async function emergencyView(
  view: readonly Message[],
  stage: "trimmed" | "cleared",
  context: ProcessorContext,
): Promise<{ view: Message[]; removedIds: string[] }> {
  // The leading system messages stay whatever the stage: every later request needs them, and nothing rebuilds
  // them once gone.
  const system = view.slice(0, leadingSystemEnd(view));
  if (stage === "cleared") {
    const start = currentTurnStart(view);
    const instruction = view[start];
    const kept = [...system, ...(instruction && opensTurn(instruction) ? [instruction] : [])];
    return {
      view: kept,
      removedIds: view.filter((message) => !kept.includes(message)).map((message) => message.id),
    };
  }
  if (view.length > 0) {
    const summary = await summarizeSafely(
      context,
      { messages: view, maxTokens: 2_000 },
      trimmedMarker(view.length),
    );
    await context.memorySink?.({
      sessionId: view[0]!.sessionId,
      summary,
      messageIds: view.map((message) => message.id),
    });
  }
  const turns = groupTurns(view).filter((turn) => turn.number > 0);
  const from = Math.max(
    system.length,
    turns.length > EMERGENCY_TURNS ? turns[turns.length - EMERGENCY_TURNS]!.start : 0,
  );
  const kept = [...system, ...view.slice(from).map(clipMessage)];
  return { view: kept, removedIds: view.slice(system.length, from).map((message) => message.id) };
}
