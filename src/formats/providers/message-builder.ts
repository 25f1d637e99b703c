import type { ContentBlock, Message, MessageKind, Role } from "../../model/message.ts";
import { randomIds, systemClock } from "../../model/ids.ts";
import { opensTurn } from "../../model/turns.ts";
import type { ImportOptions } from "./options.ts";
import { unwrapSummary } from "./summary-envelope.ts";

/** The parts of a message an importer decides; `buildMessages` fills in the rest. */
export interface MessageDraft {
  readonly role: Role;
  readonly content: readonly ContentBlock[];
  readonly kind?: MessageKind;
  readonly metadata?: Message["metadata"];
}

/**
 * Turns drafts into messages: stamps ids, the session, sequence numbers, turns and one creation time. Each
 * plain user message (not a summary) opens a new turn; everything else belongs to the turn in progress.
 *
 * @example
 * const [message] = buildMessages([{ role: "user", content: [{ type: "text", text: "hi" }] }], { sessionId: "s1" });
 * message!.turn; // 1
 */
export function buildMessages(drafts: readonly MessageDraft[], options: ImportOptions = {}): Message[] {
  const ids = options.ids ?? randomIds;
  const sessionId = options.sessionId ?? ids("ses");
  const createdAt = (options.clock ?? systemClock)().toISOString();
  const startSeq = options.startSeq ?? 0;
  let turn = options.startTurn ?? 0;
  return drafts.map((draft, position) => {
    if (opensTurn({ role: draft.role, kind: draft.kind })) turn++;
    return {
      id: ids("msg"),
      sessionId,
      seq: startSeq + position,
      turn,
      role: draft.role,
      content: draft.content,
      createdAt,
      ...(draft.kind !== undefined && { kind: draft.kind }),
      ...(draft.metadata !== undefined && { metadata: draft.metadata }),
    };
  });
}

/**
 * The draft of a user-side message: a plain user message, or a summary when its text is wrapped in the summary
 * envelope (see `summary-envelope.ts`).
 */
export function userDraft(blocks: readonly ContentBlock[]): MessageDraft {
  const summary = unwrapSummary(blocks);
  return summary === undefined
    ? { role: "user", content: blocks }
    : { role: "user", kind: "summary", content: summary };
}
