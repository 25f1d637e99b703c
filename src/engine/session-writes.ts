import type { CompactionInput, SessionRecord } from "../store/session-store.ts";
import type { MessageInput } from "../model/message.ts";
import type { EngineSettings } from "./engine-settings.ts";
import type { LoadedSession } from "./session-load.ts";
import type { GovernorStateCodec } from "./stored-governor-state.ts";

/**
 * Appends a session's messages and compactions with its governor's state, in one transaction, expecting the
 * store where the session last left it (its owner, its `nextSeq`); returns the stored record.
 */
export async function writeTurn(
  settings: EngineSettings,
  codec: GovernorStateCodec,
  state: LoadedSession,
  inputs: MessageInput[],
  compactions: CompactionInput[],
): Promise<SessionRecord> {
  const { conversation, governor } = state;
  const result = await settings.store.appendTurn(conversation.sessionId, inputs, {
    expectedNextSeq: conversation.storedNextSeq,
    expectedOwner: state.owner,
    ...(settings.sessionInit !== undefined && { session: settings.sessionInit }),
    ...(compactions.length > 0 && { compactions }),
    governorState: await codec.encode(governor.snapshot(), governor.view),
  });
  for (const summary of result.summaries) state.storedSummaries.add(summary.id);
  conversation.stored(result.session.nextSeq);
  return result.session;
}

/** The view's summaries not stored yet whose range is committed (below `seqLimit`), oldest first. */
export function unstoredCompactions(state: LoadedSession, seqLimit: number): CompactionInput[] {
  const compactions: CompactionInput[] = [];
  for (const message of state.governor.view) {
    if (message.kind !== "summary" || state.storedSummaries.has(message.id) || !message.summaryOf) continue;
    if (message.summaryOf.toSeq >= seqLimit) continue;
    const { id, content, summaryOf } = message;
    compactions.push({
      fromSeq: summaryOf.fromSeq,
      toSeq: summaryOf.toSeq,
      summary: { id, role: "user", kind: "summary", content, summaryOf },
    });
  }
  return compactions;
}

/**
 * Clears a session's context (its history committed): everything so far is replaced by one marker summary, so the
 * model starts fresh while the store keeps every original row (hidden, not deleted).
 */
export async function clearContext(
  id: string,
  settings: EngineSettings,
  state: LoadedSession,
): Promise<void> {
  const { conversation } = state;
  const last = conversation.snapshot().at(conversation.length - 1);
  if (!last) return;
  const cleared: CompactionInput = {
    // From the session's first row: loaded with `restore: "recent"`, the history in memory starts later, and
    // what it does not hold is hidden too.
    fromSeq: 0,
    toSeq: last.seq,
    summary: {
      role: "user",
      kind: "summary",
      content: [{ type: "text", text: `[Context cleared by the user at ${settings.clock().toISOString()}]` }],
    },
  };
  const { summaries } = await settings.store.appendTurn(id, [], {
    expectedNextSeq: conversation.storedNextSeq,
    expectedOwner: state.owner,
    compactions: [cleared],
  });
  const summary = summaries[0]!;
  state.storedSummaries.add(summary.id);
  await conversation.replace([summary]);
  conversation.commitTurn(summary.seq + 1);
}
